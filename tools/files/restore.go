package files

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
)

type restoreArgs struct {
	Path    string `json:"path"`
	Version *int   `json:"version"`
}

func (t *fileTools) restoreFileDef() tools.Definition {
	return tools.Definition{
		Name: "restore_file",
		Description: "Bring back an earlier version of a file in the workdir, including a removed file. " +
			"Without version it restores the content before the last change (run it twice to undo the restore). " +
			"The content it replaces is kept as a new version. file_history lists the versions.",
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "description": "File path relative to the workdir."},
				"version": {"type": "integer", "minimum": 1, "description": "Version number from file_history. Default: the version before the last change."}
			},
			"required": ["path"],
			"additionalProperties": false
		}`),
		Concurrent: false,
		// The default version moves with every change, so a second run
		// would undo the first: not idempotent.
		SideEffect:     tools.AtMostOnce,
		Timeout:        time.Minute,
		Source:         tools.SourceBuiltin,
		Subject:        tools.SubjectField("path"),
		Rules:          approval.KindPath,
		Reason:         "it restores an earlier version of {path}",
		TouchesPath:    true,
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(tools.Typed(t.restoreFile)),
		Reconcile:      t.reconcile,
	}
}

func (t *fileTools) restoreFile(ctx context.Context, req tools.Request, a restoreArgs) (tools.Result, error) {
	n := 0
	if a.Version != nil {
		if *a.Version < 1 {
			return tools.Result{}, fmt.Errorf("version %d does not exist: versions count from 1 (see file_history)", *a.Version)
		}
		n = *a.Version
	}
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	if err := ruleReach(req, a.Path, tg); err != nil {
		return tools.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	defer t.versions.lock()()
	idx, err := t.versions.load(tg.real)
	if err != nil {
		return tools.Result{}, err
	}
	v, err := idx.find(n)
	if err != nil {
		return tools.Result{}, err
	}
	if v.Dropped {
		return tools.Result{}, fmt.Errorf("version %d of %s (%d bytes) was larger than the version size limit, so no copy was kept", v.N, tg.given, v.Size)
	}
	// The file is looked at, kept as a version and replaced through its
	// folder, opened here (made if the version to bring back is a file and
	// the folder is gone), so a symbolic link swapped in meanwhile can
	// redirect none of it.
	name := path.Base(tg.real)
	dir, err := t.openWorkIfThere(tg.real)
	if err == nil && dir == nil && !v.Absent {
		dir, err = t.openWork(tg.real, true)
	}
	if err != nil {
		return tools.Result{}, err
	}
	if dir == nil {
		return tools.Text(fmt.Sprintf("restore_file: %s already matches version %d; nothing changed", tg.given, v.N)), nil
	}
	defer dir.Close()
	mode, err := dir.fileMode(name)
	if err != nil {
		return tools.Result{}, err
	}
	sum, absent, err := dir.digest(name)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, plainErr(err))
	}
	if absent && v.Mode != 0 {
		mode = v.Mode
	}
	if absent == v.Absent && sum == v.SHA256 {
		return tools.Text(fmt.Sprintf("restore_file: %s already matches version %d; nothing changed", tg.given, v.N)), nil
	}

	op := fmt.Sprintf("restore_file (version %d)", v.N)
	var apply func() error
	var tmp string
	if v.Absent {
		apply = dir.removeStep(name)
	} else {
		f, err := t.versions.open(tg.real, v)
		if err != nil {
			return tools.Result{}, err
		}
		src, err := t.wd.Capped(f) // WORKSPACE_MAX_BYTES (W3)
		if err == nil {
			tmp, _, err = dir.writeTemp(src, mode)
		}
		f.Close()
		if err != nil {
			return tools.Result{}, err
		}
		apply = dir.replaceStep(tmp, name)
	}
	prev, err := t.record(ctx, dir, tg.real, change{Op: op, Absent: v.Absent, SHA256: v.SHA256}, apply)
	if err != nil && prev.N == 0 {
		if tmp != "" {
			_ = dir.remove(tmp)
		}
		return tools.Result{}, err
	}
	var msg string
	if v.Absent {
		msg = fmt.Sprintf("restore_file: restored %s to version %d, in which the file did not exist, so it was removed", tg.given, v.N)
	} else {
		msg = fmt.Sprintf("restore_file: restored %s to version %d (%d bytes, %s)", tg.given, v.N, v.Size, describeMade(v))
	}
	msg += versionNote(prev)
	if err != nil {
		msg += "\nwarning: " + err.Error()
	}
	return tools.Result{Content: msg, Touched: tg.touched()}, nil
}

// describeMade says which change produced a version.
func describeMade(v Version) string {
	s := "made by " + v.MadeBy
	if !v.MadeAt.IsZero() {
		s += " at " + fmtTime(v.MadeAt)
	}
	return s
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
