//go:build linux

package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"unsafe"
)

// folder is a folder of the workdir, opened once by a walk from the
// workdir that follows no symbolic link. Every change a tool makes (temp
// file, rename, removal, kept version, version index, lock) happens relative
// to it, by name, never through a path that a symbolic link swapped in
// meanwhile could redirect: a swapped link moves nothing and makes the walk
// fail.
type folder struct {
	f   *os.File
	rel string // workdir-relative, for messages
}

// openFolder opens the folder rel of root, creating missing folders when
// create is set. No part of rel may be a symbolic link: callers give a
// path whose links resolve already followed, or a path in the reserved
// folder, where the tools make no links; a link found on the way was swapped
// in since, and the folder is refused.
func openFolder(root *os.Root, rel string, create bool) (*folder, error) {
	top, err := root.OpenFile(".", os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open the workdir: %w", plainErr(err))
	}
	fd := int(top.Fd())
	owned := -1 // fd to close when the walk moves on
	defer func() {
		if owned >= 0 {
			_ = syscall.Close(owned)
		}
		top.Close()
	}()
	done := "."
	for _, name := range splitPath(path.Clean(rel)) {
		next := path.Join(done, name)
		sub, err := openDirAt(fd, name)
		if errors.Is(err, syscall.ENOENT) && create {
			if err := syscall.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, syscall.EEXIST) {
				return nil, fmt.Errorf("create folder %s: %w", next, plainErr(err))
			}
			sub, err = openDirAt(fd, name)
		}
		switch {
		case errors.Is(err, syscall.ENOENT):
			return nil, &fs.PathError{Op: "open", Path: next, Err: fs.ErrNotExist}
		case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENOTDIR):
			return nil, fmt.Errorf("%s is not a folder: a file, or a symbolic link swapped in while the call ran (nothing is changed through one)", next)
		case err != nil:
			return nil, fmt.Errorf("open folder %s: %w", next, plainErr(err))
		}
		if owned >= 0 {
			_ = syscall.Close(owned)
		}
		fd, owned, done = sub, sub, next
	}
	if owned < 0 {
		// rel is the workdir itself: keep a descriptor of its own.
		if owned, err = syscall.Dup(fd); err != nil {
			return nil, fmt.Errorf("open the workdir: %w", err)
		}
		syscall.CloseOnExec(owned)
	}
	f := os.NewFile(uintptr(owned), done)
	owned = -1
	return &folder{f: f, rel: done}, nil
}

func openDirAt(fd int, name string) (int, error) {
	return syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

func (d *folder) Close() { d.f.Close() }

func (d *folder) fd() int { return int(d.f.Fd()) }

func (d *folder) err(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: path.Join(d.rel, name), Err: err}
}

// open opens the file name for reading. A symbolic link is not followed,
// and a FIFO or device does not block; callers check that it is a regular
// file.
func (d *folder) open(name string) (*os.File, error) {
	fd, err := syscall.Openat(d.fd(), name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, d.err("open", name, err)
	}
	return os.NewFile(uintptr(fd), path.Join(d.rel, name)), nil
}

// stat describes the entry name itself (a symbolic link is not followed).
func (d *folder) stat(name string) (fs.FileInfo, error) {
	const oPath = 0x200000 // O_PATH, which package syscall does not name
	fd, err := syscall.Openat(d.fd(), name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, d.err("stat", name, err)
	}
	f := os.NewFile(uintptr(fd), path.Join(d.rel, name))
	defer f.Close()
	return f.Stat()
}

// lockFile opens name for locking, creating it if needed.
func (d *folder) lockFile(name string) (*os.File, error) {
	fd, err := syscall.Openat(d.fd(), name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, d.err("open", name, err)
	}
	return os.NewFile(uintptr(fd), path.Join(d.rel, name)), nil
}

// createTemp makes a new empty file with a fresh name in the folder.
func (d *folder) createTemp(perm fs.FileMode) (*os.File, string, error) {
	name := tempName()
	fd, err := syscall.Openat(d.fd(), name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, "", d.err("create", name, err)
	}
	return os.NewFile(uintptr(fd), path.Join(d.rel, name)), name, nil
}

// rename moves the entry from onto to, both in this folder.
func (d *folder) rename(from, to string) error {
	if err := syscall.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return d.err("rename", to, err)
	}
	return nil
}

// remove removes the file (or symbolic link) name.
func (d *folder) remove(name string) error {
	if err := syscall.Unlinkat(d.fd(), name); err != nil {
		return d.err("remove", name, err)
	}
	return nil
}

// removeDir removes the empty folder name.
func (d *folder) removeDir(name string) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return d.err("remove", name, err)
	}
	const atRemoveDir = 0x200 // AT_REMOVEDIR
	if _, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(d.fd()), uintptr(unsafe.Pointer(p)), atRemoveDir); e != 0 {
		return d.err("remove", name, e)
	}
	return nil
}

// entries lists the folder.
func (d *folder) entries() ([]fs.DirEntry, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return d.f.ReadDir(-1)
}
