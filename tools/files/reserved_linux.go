//go:build linux

package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/toolround/toolround/tools"
)

// outsideReserved walks up from the open folder dir to the workdir and
// fails if it passes the reserved folder. It follows "..", which no symlink
// can redirect. (The walk that opened dir followed no link, so only a
// folder moved by a rename could lead there.)
func outsideReserved(root *os.Root, dir *os.File) error {
	reserved, err := root.Stat(tools.ReservedDir)
	if err != nil {
		return nil // no reserved folder, nothing to land in
	}
	top, err := root.Stat(".")
	if err != nil {
		return err
	}
	fd, err := syscall.Dup(int(dir.Fd()))
	if err != nil {
		return err
	}
	defer func() { _ = syscall.Close(fd) }()
	for range 4096 {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return err
		}
		fi := &fdInfo{st}
		switch {
		case fi.same(reserved):
			return fmt.Errorf("it is in the reserved folder %s (a symbolic link was swapped in)", tools.ReservedDir)
		case fi.same(top):
			return nil
		}
		up, err := syscall.Openat(fd, "..", os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		_ = syscall.Close(fd)
		fd = up
	}
	return errors.New("it is too deep to check")
}

type fdInfo struct{ st syscall.Stat_t }

func (f *fdInfo) same(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Dev == f.st.Dev && st.Ino == f.st.Ino
}
