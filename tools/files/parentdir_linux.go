//go:build linux

package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/toolround/toolround/tools"
)

// parentDir is the folder a file is written in, opened once: the temp file
// is made, renamed and removed relative to it, never through a path that a
// symlink swapped in later could redirect. openParent refuses a folder that
// is the reserved one or inside it.
type parentDir struct {
	f *os.File
}

func openParent(root *os.Root, rel string) (*parentDir, error) {
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create folder %s: %w", dir, plainErr(err))
	}
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open folder %s: %w", dir, plainErr(err))
	}
	if err := outsideReserved(root, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("folder %s: %w", dir, err)
	}
	return &parentDir{f: f}, nil
}

func (d *parentDir) Close() { d.f.Close() }

func (d *parentDir) fd() int { return int(d.f.Fd()) }

// writeTemp writes data to a new file in the folder and returns its name.
func (d *parentDir) writeTemp(data []byte, perm fs.FileMode) (string, error) {
	name := path.Base(tempName("."))
	fd, err := syscall.Openat(d.fd(), name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm))
	if err != nil {
		return "", fmt.Errorf("create a temp file: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask may have narrowed it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.remove(name)
		return "", fmt.Errorf("write: %w", plainErr(err))
	}
	return name, nil
}

// renameInto moves the temp file onto the file rel names in this folder.
func (d *parentDir) renameInto(tmp, rel string) error {
	if err := syscall.Renameat(d.fd(), tmp, d.fd(), path.Base(rel)); err != nil {
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	return nil
}

func (d *parentDir) remove(name string) { _ = syscall.Unlinkat(d.fd(), name) }

// outsideReserved walks up from the open folder dir to the workdir and
// fails if it passes the reserved folder. It follows "..", which no symlink
// can redirect.
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
