package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/toolround/toolround/tools"
)

// versionsDir holds one folder per file that has versions, named by a hash
// of the file's workdir path, with index.json and one file per kept version.
const versionsDir = tools.ReservedDir + "/versions"

// Version is one earlier state of a file, kept when a change replaced it.
type Version struct {
	N int `json:"version"`
	// Absent is a state in which the file did not exist (before it was created).
	Absent bool  `json:"absent,omitempty"`
	Size   int64 `json:"size"`
	// SHA256 is the hex digest of the content; empty when Absent.
	SHA256 string `json:"sha256,omitempty"`
	// Mode is the permission bits the file had.
	Mode fs.FileMode `json:"mode,omitempty"`
	// Dropped is set when the content was too large to keep.
	Dropped bool `json:"dropped,omitempty"`
	// MadeBy is the change that produced this state, when a file tool made it.
	MadeBy string    `json:"made_by,omitempty"`
	MadeAt time.Time `json:"made_at,omitzero"`
	// ReplacedBy is the change that replaced this state.
	ReplacedBy string    `json:"replaced_by"`
	ReplacedAt time.Time `json:"replaced_at"`
}

// madeByUnknown and madeByOriginal describe a state that no recorded change made.
const (
	madeByUnknown  = "a change outside the file tools"
	madeByOriginal = "the original, before any recorded change"
)

// current is the state the last recorded change left, so that the next
// snapshot can tell whether something else changed the file since.
type current struct {
	Op     string    `json:"op"`
	Time   time.Time `json:"time"`
	Absent bool      `json:"absent,omitempty"`
	SHA256 string    `json:"sha256,omitempty"`
}

type versionIndex struct {
	Path     string    `json:"path"`
	Next     int       `json:"next"`
	Current  *current  `json:"current,omitempty"`
	Versions []Version `json:"versions"`
}

// change describes a change about to be made to a file.
type change struct {
	Op string
	// Absent: the change removes the file. Otherwise SHA256 is the new content's digest.
	Absent bool
	SHA256 string
}

// lockFile is locked (flock) around every change, so that workers in
// other processes sharing the workdir never interleave their changes of a
// version index.
const lockFile = tools.ReservedDir + "/versions.lock"

// store keeps the versions of the workdir's files in its reserved folder.
// A mutex orders the changes made through it, and a lock on lockFile those
// of other processes (and other stores) on the same workdir.
type store struct {
	root     *os.Root
	max      int
	maxBytes int64
	now      func() time.Time
	mu       sync.Mutex
}

func newStore(root *os.Root, maxVersions int, maxBytes int64, now func() time.Time) *store {
	return &store{root: root, max: maxVersions, maxBytes: maxBytes, now: now}
}

func (s *store) dir(rel string) string {
	sum := sha256.Sum256([]byte(rel))
	return path.Join(versionsDir, hex.EncodeToString(sum[:16]))
}

func (s *store) contentPath(rel string, n int) string {
	return path.Join(s.dir(rel), strconv.Itoa(n))
}

// indexFile is the version index in a version folder.
const indexFile = "index.json"

// folder opens the version folder of rel.
func (s *store) folder(rel string, create bool) (*folder, error) {
	return openFolder(s.root, s.dir(rel), create)
}

// load returns the index of rel; a file without versions has an empty one.
func (s *store) load(rel string) (*versionIndex, error) {
	d, err := s.folder(rel, false)
	if errors.Is(err, fs.ErrNotExist) {
		return &versionIndex{Path: rel, Next: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the version index of %s: %w", rel, plainErr(err))
	}
	defer d.Close()
	return s.loadIn(d, rel)
}

// loadIn is load from the version folder d of rel.
func (s *store) loadIn(d *folder, rel string) (*versionIndex, error) {
	name := path.Join(s.dir(rel), indexFile)
	data, err := d.readFile(indexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &versionIndex{Path: rel, Next: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the version index of %s: %w", rel, plainErr(err))
	}
	var idx versionIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("the version index of %s (%s) is damaged: %w", rel, name, err)
	}
	if idx.Path != rel {
		return nil, fmt.Errorf("the version index %s belongs to %s, not %s", name, idx.Path, rel)
	}
	if idx.Next < 1 {
		idx.Next = 1
	}
	return &idx, nil
}

func (s *store) save(d *folder, idx *versionIndex) error {
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the version index of %s: %w", idx.Path, err)
	}
	if _, err := d.writeAtomic(indexFile, bytes.NewReader(data), 0o644); err != nil {
		return fmt.Errorf("save the version index of %s: %w", idx.Path, err)
	}
	return nil
}

// loadForChange is load for a change: a damaged index is set aside and a
// new history starts, so that a broken record never blocks edits.
func (s *store) loadForChange(d *folder, rel string) *versionIndex {
	idx, err := s.loadIn(d, rel)
	if err == nil {
		return idx
	}
	_ = d.rename(indexFile, indexFile+".damaged")
	return &versionIndex{Path: rel, Next: 1}
}

// lock orders a read-decide-change sequence against every other change,
// in this process and in others. Where the lock file cannot be made or
// locked (a read-only or lock-less file system), only this process's
// changes are ordered.
func (s *store) lock() func() {
	s.mu.Lock()
	f := s.lockFile()
	return func() {
		if f != nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
		s.mu.Unlock()
	}
}

// lockFile opens and locks lockFile with a descriptor of its own: flock
// locks belong to the open file, so each holder needs its own.
func (s *store) lockFile() *os.File {
	d, err := openFolder(s.root, path.Dir(lockFile), true)
	if err != nil {
		return nil
	}
	f, err := d.lockFile(path.Base(lockFile))
	d.Close()
	if err != nil {
		return nil
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil
	}
	return f
}

// record keeps the current state of rel, which is the file name in the
// opened folder w, as a new version, runs apply (which makes the change)
// and records the change. The caller holds the lock. If apply fails
// nothing is recorded. The returned version holds the state before the
// change.
func (s *store) record(w *folder, rel string, c change, apply func() error) (Version, error) {
	d, err := s.folder(rel, true)
	if err != nil {
		return Version{}, fmt.Errorf("keep a version of %s: %w", rel, plainErr(err))
	}
	defer d.Close()
	idx := s.loadForChange(d, rel)
	now := s.now().UTC()
	v, err := s.snapshot(d, idx, w, rel)
	if err != nil {
		return Version{}, err
	}
	v.ReplacedBy, v.ReplacedAt = c.Op, now
	if err := apply(); err != nil {
		if !v.Absent && !v.Dropped {
			_ = d.remove(strconv.Itoa(v.N))
		}
		return Version{}, err
	}
	idx.Next = v.N + 1
	idx.Versions = append(idx.Versions, v)
	idx.Current = &current{Op: c.Op, Time: now, Absent: c.Absent, SHA256: c.SHA256}
	if extra := len(idx.Versions) - s.max; extra > 0 {
		for _, old := range idx.Versions[:extra] {
			_ = d.remove(strconv.Itoa(old.N))
		}
		idx.Versions = append([]Version(nil), idx.Versions[extra:]...)
	}
	if err := s.save(d, idx); err != nil {
		return v, fmt.Errorf("the change to %s was made, but its version record was not saved: %w", rel, err)
	}
	return v, nil
}

// snapshot copies the current content of rel (the file in w) into the next
// version slot of the version folder d.
func (s *store) snapshot(d *folder, idx *versionIndex, w *folder, rel string) (Version, error) {
	v := Version{N: idx.Next}
	madeBy := func(absent bool, sum string, mod time.Time) {
		switch c := idx.Current; {
		case c == nil:
			v.MadeBy, v.MadeAt = madeByOriginal, mod
		case c.Absent == absent && c.SHA256 == sum:
			v.MadeBy, v.MadeAt = c.Op, c.Time
		default:
			v.MadeBy, v.MadeAt = madeByUnknown, mod
		}
	}
	f, err := w.open(path.Base(rel))
	if errors.Is(err, fs.ErrNotExist) {
		v.Absent = true
		madeBy(true, "", time.Time{})
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("keep a version of %s: %w", rel, plainErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return v, fmt.Errorf("keep a version of %s: %w", rel, plainErr(err))
	}
	if !fi.Mode().IsRegular() {
		return v, fmt.Errorf("%s is not a regular file", rel)
	}
	v.Size, v.Mode = fi.Size(), fi.Mode().Perm()
	mod := fi.ModTime().UTC()
	if v.Size > s.maxBytes {
		v.Dropped = true
		madeBy(false, "", mod)
		return v, nil
	}
	h := sha256.New()
	n, err := d.writeAtomic(strconv.Itoa(v.N), io.TeeReader(f, h), 0o644)
	if err != nil {
		return v, fmt.Errorf("keep a version of %s: %w", rel, err)
	}
	v.Size, v.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	madeBy(false, v.SHA256, mod)
	return v, nil
}

// find returns version n of rel, or the newest when n is 0.
func (idx *versionIndex) find(n int) (Version, error) {
	if len(idx.Versions) == 0 {
		return Version{}, fmt.Errorf("no versions of %s are kept; file_history lists what is kept", idx.Path)
	}
	if n == 0 {
		return idx.Versions[len(idx.Versions)-1], nil
	}
	for _, v := range idx.Versions {
		if v.N == n {
			return v, nil
		}
	}
	first, last := idx.Versions[0].N, idx.Versions[len(idx.Versions)-1].N
	return Version{}, fmt.Errorf("%s has no version %d; kept versions are %d to %d (see file_history)", idx.Path, n, first, last)
}

// open returns the content of a kept version.
func (s *store) open(rel string, v Version) (*os.File, error) {
	d, err := s.folder(rel, false)
	if err != nil {
		return nil, fmt.Errorf("open version %d of %s: %w", v.N, rel, plainErr(err))
	}
	defer d.Close()
	f, err := d.open(strconv.Itoa(v.N))
	if err != nil {
		return nil, fmt.Errorf("open version %d of %s: %w", v.N, rel, plainErr(err))
	}
	return f, nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
