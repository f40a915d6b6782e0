package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/toolround/toolround/tools"
)

// maxHashBytes is the largest file whose content digest read_files records;
// a larger one is compared by size and modification time only.
const maxHashBytes = 64 << 20

// unreadable is the state recorded for a path that could not be looked at:
// it never equals a state looked at later, so such a read is never repeated.
var unreadable = tools.FileState{Size: -1}

// fileStates records the state of each path a read_files call is about to
// read, by its workdir path (U3). They are taken before the read, so that a
// change during the read makes the result look stale rather than fresh.
func (t *fileTools) fileStates(ctx context.Context, paths []string) map[string]tools.FileState {
	out := make(map[string]tools.FileState, len(paths))
	for _, p := range paths {
		rel, err := t.wd.Rel(p)
		if err != nil {
			continue // read_files reports it; nothing on disk to watch
		}
		if _, done := out[rel]; done {
			continue
		}
		st, err := t.fileState(ctx, rel)
		if err != nil {
			st = unreadable
		}
		out[rel] = st
	}
	return out
}

// changed is read_files' Definition.Changed: the recorded paths whose state
// now differs, or that cannot be looked at.
func (t *fileTools) changed(ctx context.Context, files map[string]tools.FileState) []string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		was := files[p]
		now, err := t.fileState(ctx, p)
		if err != nil || was == unreadable || now != was {
			out = append(out, p)
		}
	}
	return out
}

// fileState looks at one workdir path the way read_files reads it: through
// its symbolic links, confined to the workdir.
func (t *fileTools) fileState(ctx context.Context, rel string) (tools.FileState, error) {
	tg, err := t.resolve(rel)
	if err != nil {
		return tools.FileState{}, err
	}
	f, err := openRead(t.wd.Root(), tg.real)
	if errors.Is(err, fs.ErrNotExist) {
		return tools.FileState{Missing: true}, nil
	}
	if err != nil {
		return tools.FileState{}, plainErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return tools.FileState{}, plainErr(err)
	}
	st := tools.FileState{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	h := sha256.New()
	switch {
	case fi.IsDir():
		// A folder's listing shows names, kinds and sizes; its digest covers them.
		entries, err := fs.ReadDir(t.wd.Root().FS(), tg.real)
		if err != nil {
			return tools.FileState{}, plainErr(err)
		}
		st.Size = int64(len(entries))
		for _, e := range entries {
			var size int64
			if info, err := e.Info(); err == nil && e.Type().IsRegular() {
				size = info.Size()
			}
			fmt.Fprintf(h, "%s\x00%v\x00%d\n", e.Name(), e.Type(), size)
		}
	case !fi.Mode().IsRegular() || fi.Size() > maxHashBytes:
		return st, nil
	default:
		if err := copyCtx(ctx, h, f); err != nil {
			return tools.FileState{}, err
		}
	}
	st.SHA256 = hex.EncodeToString(h.Sum(nil))
	return st, nil
}

// copyCtx copies r to w, stopping when ctx is done.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) error {
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return plainErr(err)
		}
	}
}
