package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
)

// openWork opens the folder that holds the workdir file rel (a path
// resolve returned), creating it and its parents when create is set. It
// refuses the reserved folder. A missing folder is an error that matches
// fs.ErrNotExist.
func (t *fileTools) openWork(rel string, create bool) (*folder, error) {
	d, err := openFolder(t.wd.Root(), path.Dir(rel), create)
	if err != nil {
		return nil, err
	}
	if err := outsideReserved(t.wd.Root(), d.f); err != nil {
		d.Close()
		return nil, fmt.Errorf("folder %s: %w", d.rel, err)
	}
	return d, nil
}

// openWorkIfThere is openWork without creating: a nil folder and no error
// when the folder does not exist (so neither does the file).
func (t *fileTools) openWorkIfThere(rel string) (*folder, error) {
	d, err := t.openWork(rel, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return d, err
}

// writeTemp writes src to a new file in the folder and returns its name;
// the caller renames it into place or removes it. Renaming makes every
// write atomic: a reader sees the old content or the new one, never half
// of it.
func (d *folder) writeTemp(src io.Reader, perm fs.FileMode) (string, int64, error) {
	f, name, err := d.createTemp(perm)
	if err != nil {
		return "", 0, fmt.Errorf("create a temp file in %s: %w", d.rel, plainErr(err))
	}
	n, err := io.Copy(f, src)
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
		_ = d.remove(name)
		return "", 0, fmt.Errorf("write in %s: %w", d.rel, plainErr(err))
	}
	return name, n, nil
}

// writeAtomic writes src to the file name through a temp file renamed into
// place.
func (d *folder) writeAtomic(name string, src io.Reader, perm fs.FileMode) (int64, error) {
	tmp, n, err := d.writeTemp(src, perm)
	if err != nil {
		return 0, err
	}
	if err := d.replaceStep(tmp, name)(); err != nil {
		_ = d.remove(tmp)
		return 0, err
	}
	return n, nil
}

// replaceStep is a change that moves a written temp file onto name.
func (d *folder) replaceStep(tmp, name string) func() error {
	return func() error {
		if err := d.rename(tmp, name); err != nil {
			return fmt.Errorf("replace %s: %w", path.Join(d.rel, name), plainErr(err))
		}
		return nil
	}
}

// removeStep is a change that removes the file name.
func (d *folder) removeStep(name string) func() error {
	return func() error {
		if err := d.remove(name); err != nil {
			return fmt.Errorf("remove %s: %w", path.Join(d.rel, name), plainErr(err))
		}
		return nil
	}
}

func (d *folder) readFile(name string) ([]byte, error) {
	f, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// fileMode is the permission bits of the regular file name, or 0644 when
// there is none.
func (d *folder) fileMode(name string) (fs.FileMode, error) {
	fi, err := d.stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0o644, nil
	}
	rel := path.Join(d.rel, name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", rel, plainErr(err))
	}
	if fi.IsDir() {
		return 0, fmt.Errorf("%s is a folder", rel)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", rel)
	}
	return fi.Mode().Perm(), nil
}

// digest is the hex SHA-256 of the file name; absent is true when there is
// no such file.
func (d *folder) digest(name string) (sum string, absent bool, err error) {
	f, err := d.open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), false, nil
}
