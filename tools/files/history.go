package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
)

func (t *fileTools) fileHistoryDef() tools.Definition {
	return tools.Definition{
		Name: "file_history",
		Description: "List the kept versions of a file in the workdir (also of a removed file): version number, " +
			"time, size and the change that made and replaced each, then the current state. Versions are kept " +
			"when edit_file, remove_file, restore_file or download_file change a file. For a folder it lists " +
			"the files under it that have versions. Bring one back with restore_file(path, version).",
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "description": "File or folder path relative to the workdir."}
			},
			"required": ["path"],
			"additionalProperties": false
		}`),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Volatile:   true,
		Timeout:    time.Minute,
		Source:     tools.SourceBuiltin,
		Subject:    tools.SubjectField("path"),
		Rules:      approval.KindPath,
		Handler:    tools.Typed(t.fileHistory),
	}
}

func (t *fileTools) fileHistory(ctx context.Context, req tools.Request, a pathArgs) (tools.Result, error) {
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	idx, err := t.versions.load(tg.real)
	if err != nil {
		return tools.Result{}, err
	}
	if len(idx.Versions) > 0 {
		return tools.Text(t.renderHistory(tg, idx)), nil
	}
	under, err := t.versionedUnder(ctx, tg.real)
	if err != nil {
		return tools.Result{}, err
	}
	if len(under) == 0 {
		return tools.Text(fmt.Sprintf("file_history: no versions of %s are kept yet; versions are kept when edit_file, remove_file, restore_file or download_file change a file", tg.given)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "file_history: %d files under %s have versions; list one with file_history(path)", len(under), tg.given)
	const show = 100
	for i, u := range under {
		if i == show {
			fmt.Fprintf(&b, "\n… and %d more", len(under)-show)
			break
		}
		last := u.Versions[len(u.Versions)-1]
		state := "exists"
		if u.Current != nil && u.Current.Absent {
			state = "removed"
		}
		fmt.Fprintf(&b, "\n%s: %d versions, %s; last change %s at %s", u.Path, len(u.Versions), state, last.ReplacedBy, fmtTime(last.ReplacedAt))
	}
	return tools.Text(b.String()), nil
}

func (t *fileTools) renderHistory(tg target, idx *versionIndex) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file_history %s: %d versions kept, oldest first; bring one back with restore_file(path, version)", tg.given, len(idx.Versions))
	if tg.real != tg.given {
		fmt.Fprintf(&b, " (the path is a symbolic link to %s)", tg.real)
	}
	for _, v := range idx.Versions {
		fmt.Fprintf(&b, "\nversion %d: ", v.N)
		switch {
		case v.Absent:
			b.WriteString("the file did not exist")
			if v.MadeBy != madeByOriginal {
				b.WriteString(" (" + describeMade(v) + ")")
			}
		case v.Dropped:
			fmt.Fprintf(&b, "%d bytes, %s; too large, no copy kept", v.Size, describeMade(v))
		default:
			fmt.Fprintf(&b, "%d bytes, %s", v.Size, describeMade(v))
		}
		fmt.Fprintf(&b, "; replaced by %s at %s", v.ReplacedBy, fmtTime(v.ReplacedAt))
	}
	b.WriteString("\ncurrent: ")
	name := path.Base(tg.real)
	dir, err := t.openWorkIfThere(tg.real)
	var fi fs.FileInfo
	switch {
	case err == nil && dir == nil:
		err = fs.ErrNotExist
	case err == nil:
		defer dir.Close()
		fi, err = dir.stat(name)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.WriteString("the file does not exist")
	case err != nil:
		b.WriteString(plainErr(err).Error())
	case !fi.Mode().IsRegular():
		b.WriteString("not a regular file")
	default:
		fmt.Fprintf(&b, "%d bytes", fi.Size())
	}
	if c := idx.Current; c != nil {
		sum, absent, herr := "", true, error(nil)
		if dir != nil {
			sum, absent, herr = dir.digest(name)
		}
		if herr == nil && absent == c.Absent && sum == c.SHA256 {
			fmt.Fprintf(&b, ", made by %s at %s", c.Op, fmtTime(c.Time))
		} else {
			fmt.Fprintf(&b, ", changed outside the file tools since %s at %s", c.Op, fmtTime(c.Time))
		}
	}
	return b.String()
}

// versionedUnder returns the indexes of files under dir that have versions,
// sorted by path.
func (t *fileTools) versionedUnder(ctx context.Context, dir string) ([]*versionIndex, error) {
	root := t.wd.Root()
	entries, err := fs.ReadDir(root.FS(), versionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", plainErr(err))
	}
	var out []*versionIndex
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.IsDir() {
			continue
		}
		data, err := root.ReadFile(path.Join(versionsDir, e.Name(), "index.json"))
		if err != nil {
			continue
		}
		var idx versionIndex
		if json.Unmarshal(data, &idx) != nil || len(idx.Versions) == 0 || !tools.Covers(dir, idx.Path) {
			continue
		}
		out = append(out, &idx)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
