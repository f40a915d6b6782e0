package files

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
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
		Rules:          approval.KindPath,
		Reason:         "it removes {path}",
		TouchesPath:    true,
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(tools.Typed(t.removeFile)),
		Reconcile:      t.reconcile,
	}
}

func (t *fileTools) removeFile(ctx context.Context, req tools.Request, a pathArgs) (tools.Result, error) {
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	if err := ruleReach(req, a.Path, tg); err != nil {
		return tools.Result{}, err
	}
	if tg.real == "." {
		return tools.Result{}, errors.New("the path names the workdir itself; remove the files in it one by one")
	}
	defer t.versions.lock()()
	// The file is looked at, kept as a version and removed through its
	// folder, opened here, so a symbolic link swapped in meanwhile can
	// redirect none of it.
	dir, err := t.openWork(tg.real, false)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w; find files with find_files", tg.given, plainErr(err))
	}
	defer dir.Close()
	name := path.Base(tg.real)
	fi, err := dir.stat(name)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w; find files with find_files", tg.given, plainErr(err))
	}
	if fi.IsDir() {
		return t.removeFolder(ctx, tg)
	}
	if !fi.Mode().IsRegular() {
		return tools.Result{}, fmt.Errorf("%s is not a regular file; remove it with run_command", tg.given)
	}
	v, err := t.record(ctx, dir, tg.real, change{Op: "remove_file", Absent: true}, dir.removeStep(name))
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

// removeFolder removes every file of a folder through the version store, so
// each can be restored, then the emptied folders, deepest first. The folder
// is listed, and each file and folder removed, through folders opened by
// walks that follow no symbolic link: a link swapped in meanwhile makes the
// removal stop rather than lead elsewhere.
func (t *fileTools) removeFolder(ctx context.Context, tg target) (tools.Result, error) {
	var files, dirs []string
	if err := t.collect(tg, tg.real, &files, &dirs); err != nil {
		return tools.Result{}, plainErr(err)
	}
	if err := markMulti(ctx); err != nil {
		return tools.Result{}, fmt.Errorf("nothing removed: recording that the removal covers the files of %s failed: %w", tg.given, err)
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, fmt.Errorf("stopped after removing %d of the %d files of %s (their versions are kept): %w", i, len(files), tg.given, err)
		}
		if err := t.removeOne(f, "remove_file (folder "+tg.real+")"); err != nil {
			return tools.Result{}, fmt.Errorf("removed %d of the %d files of %s (their versions are kept), then: %w", i, len(files), tg.given, err)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		err := t.removeEmpty(dirs[i])
		if err != nil {
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

// collect adds the folder rel and everything under it to dirs and files,
// parents before their contents, in name order.
func (t *fileTools) collect(tg target, rel string, files, dirs *[]string) error {
	d, err := openFolder(t.wd.Root(), rel, false)
	if err != nil {
		return err
	}
	entries, err := d.entries()
	d.Close()
	if err != nil {
		return err
	}
	*dirs = append(*dirs, rel)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		p := path.Join(rel, e.Name())
		switch {
		case e.IsDir():
			if err := t.collect(tg, p, files, dirs); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if len(*files) == t.cfg.MaxRemoveFiles {
				return fmt.Errorf("%s holds more than %d files; remove smaller parts of it", tg.given, t.cfg.MaxRemoveFiles)
			}
			*files = append(*files, p)
		default:
			return fmt.Errorf("%s holds %s, which is not a regular file or folder; remove_file keeps versions of regular files only, so remove it with run_command", tg.given, p)
		}
	}
	return nil
}

// removeOne keeps a version of the file rel and removes it.
func (t *fileTools) removeOne(rel, op string) error {
	dir, err := t.openWork(rel, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	_, err = t.versions.record(dir, rel, change{Op: op, Absent: true}, dir.removeStep(path.Base(rel)))
	return err
}

// removeEmpty removes the empty folder rel.
func (t *fileTools) removeEmpty(rel string) error {
	dir, err := t.openWork(rel, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.removeDir(path.Base(rel))
}
