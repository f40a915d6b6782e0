package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

type pathArgs struct {
	Path string `json:"path"`
}

func (t *fileTools) removeFileDef() tools.Definition {
	return tools.Definition{
		Name: "remove_file",
		Description: "Remove a file, or a folder with everything in it, from the workdir. The content of every " +
			"removed file is kept as a version first: restore_file brings a file back, file_history on the " +
			"folder lists the removed files. A folder may hold only files and folders (no symbolic links) " +
			fmt.Sprintf("and at most %d files.", t.cfg.MaxRemoveFiles),
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "description": "File or folder path relative to the workdir."}
			},
			"required": ["path"],
			"additionalProperties": false
		}`),
		Concurrent:     false,
		SideEffect:     tools.AtMostOnce,
		Timeout:        2 * time.Minute,
		Source:         tools.SourceBuiltin,
		Subject:        tools.SubjectField("path"),
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(t.removeFile),
		Reconcile:      t.reconcile,
	}
}

func (t *fileTools) removeFile(ctx context.Context, req tools.Request) (tools.Result, error) {
	var a pathArgs
	if err := req.Decode(&a); err != nil {
		return tools.Result{}, err
	}
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	if tg.real == "." {
		return tools.Result{}, errors.New("the path names the workdir itself; remove the files in it one by one")
	}
	defer t.versions.lock()()
	fi, err := t.wd.Root().Lstat(tg.real)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w; find files with find_files", tg.given, plainErr(err))
	}
	if fi.IsDir() {
		return t.removeFolder(ctx, tg)
	}
	if !fi.Mode().IsRegular() {
		return tools.Result{}, fmt.Errorf("%s is not a regular file; remove it with run_command", tg.given)
	}
	v, err := t.record(ctx, tg.real, change{Op: "remove_file", Absent: true}, t.removeStep(tg.real))
	if err != nil && v.N == 0 {
		return tools.Result{}, err
	}
	msg := fmt.Sprintf("remove_file: removed %s (%d bytes)", tg.given, fi.Size())
	if tg.real != tg.given {
		msg += " through the symbolic link to " + tg.real
	}
	msg += versionNote(v)
	if err != nil {
		msg += "\nwarning: " + err.Error()
	}
	return tools.Result{Content: msg, Touched: tg.touched()}, nil
}

func (t *fileTools) removeStep(rel string) func() error {
	return func() error {
		if err := t.wd.Root().Remove(rel); err != nil {
			return fmt.Errorf("remove %s: %w", rel, plainErr(err))
		}
		return nil
	}
}

// removeFolder removes every file of a folder through the version store, so
// each can be restored, then the emptied folders, deepest first.
func (t *fileTools) removeFolder(ctx context.Context, tg target) (tools.Result, error) {
	var files, dirs []string
	err := fs.WalkDir(t.wd.Root().FS(), tg.real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			if len(files) == t.cfg.MaxRemoveFiles {
				return fmt.Errorf("%s holds more than %d files; remove smaller parts of it", tg.given, t.cfg.MaxRemoveFiles)
			}
			files = append(files, p)
		default:
			return fmt.Errorf("%s holds %s, which is not a regular file or folder; remove_file keeps versions of regular files only, so remove it with run_command", tg.given, p)
		}
		return nil
	})
	if err != nil {
		return tools.Result{}, plainErr(err)
	}
	if err := markMulti(ctx); err != nil {
		return tools.Result{}, fmt.Errorf("nothing removed: recording that the removal covers the files of %s failed: %w", tg.given, err)
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, fmt.Errorf("stopped after removing %d of the %d files of %s (their versions are kept): %w", i, len(files), tg.given, err)
		}
		if _, err := t.versions.record(f, change{Op: "remove_file (folder " + tg.real + ")", Absent: true}, t.removeStep(f)); err != nil {
			return tools.Result{}, fmt.Errorf("removed %d of the %d files of %s (their versions are kept), then: %w", i, len(files), tg.given, err)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := t.wd.Root().Remove(dirs[i]); err != nil {
			return tools.Result{}, fmt.Errorf("removed the %d files of %s (their versions are kept), but not the folder %s: %w", len(files), tg.given, dirs[i], plainErr(err))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "remove_file: removed folder %s with %d files and %d folders", tg.given, len(files), len(dirs))
	if tg.real != tg.given {
		b.WriteString(" through the symbolic link to " + tg.real)
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "; every file's content is kept as a version: restore one with restore_file(path), or list them with file_history(%q)", tg.given)
		const show = 20
		for i, f := range files {
			if i == show {
				fmt.Fprintf(&b, "\n… and %d more", len(files)-show)
				break
			}
			b.WriteString("\n" + path.Clean(f))
		}
	}
	return tools.Result{Content: b.String(), Touched: tg.touched()}, nil
}
