//go:build !linux

package files

import (
	"bytes"
	"io/fs"
	"os"
	"path"
)

// parentDir writes through paths of the root where the descriptor-relative
// calls of Linux are missing: a symlink swapped in during an edit may then
// move the temp file within the workdir (the os.Root still keeps it inside).
type parentDir struct {
	root *os.Root
	dir  string
}

func openParent(root *os.Root, rel string) (*parentDir, error) {
	return &parentDir{root: root, dir: path.Dir(rel)}, nil
}

func (d *parentDir) Close() {}

func (d *parentDir) writeTemp(data []byte, perm fs.FileMode) (string, error) {
	name, _, err := writeTemp(d.root, path.Join(d.dir, "f"), bytes.NewReader(data), perm)
	return name, err
}

func (d *parentDir) renameInto(tmp, rel string) error {
	if err := d.root.Rename(tmp, rel); err != nil {
		return err
	}
	return nil
}

func (d *parentDir) remove(name string) { _ = d.root.Remove(name) }
