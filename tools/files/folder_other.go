//go:build !linux

package files

import (
	"io"
	"io/fs"
	"os"
	"path"
)

// folder works through paths of the workdir's os.Root where the
// descriptor-relative calls used on Linux are missing: a symbolic link
// swapped in during a change may then redirect it within the workdir (the
// os.Root still keeps it inside).
type folder struct {
	root *os.Root
	rel  string
	f    *os.File
}

func openFolder(root *os.Root, rel string, create bool) (*folder, error) {
	rel = path.Clean(rel)
	if create {
		if err := root.MkdirAll(rel, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	return &folder{root: root, rel: rel, f: f}, nil
}

// outsideReserved has nothing to check where folders are not opened by
// descriptor.
func outsideReserved(*os.Root, *os.File) error { return nil }

func (d *folder) Close() { d.f.Close() }

func (d *folder) path(name string) string { return path.Join(d.rel, name) }

func (d *folder) open(name string) (*os.File, error) { return openRead(d.root, d.path(name)) }

func (d *folder) stat(name string) (fs.FileInfo, error) { return d.root.Lstat(d.path(name)) }

func (d *folder) lockFile(name string) (*os.File, error) {
	return d.root.OpenFile(d.path(name), os.O_RDWR|os.O_CREATE, 0o644)
}

func (d *folder) createTemp(perm fs.FileMode) (*os.File, string, error) {
	name := tempName()
	f, err := d.root.OpenFile(d.path(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	return f, name, err
}

func (d *folder) rename(from, to string) error { return d.root.Rename(d.path(from), d.path(to)) }

func (d *folder) remove(name string) error { return d.root.Remove(d.path(name)) }

func (d *folder) removeDir(name string) error { return d.root.Remove(d.path(name)) }

func (d *folder) entries() ([]fs.DirEntry, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return d.f.ReadDir(-1)
}
