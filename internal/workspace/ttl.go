package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

// EnvTTL names WORKSPACE_TTL.
const EnvTTL = "WORKSPACE_TTL"

// Janitor removes the workspaces idle longer than TTL (W3): nothing in
// them changed, and no call used them (tools.Workdir.Session marks each
// use on the workspace's .toolround), for TTL; no round or agent run of
// the session is open; no background command of it still runs. One whose
// session's workflows cannot be listed is kept.
type Janitor struct {
	Workdir string
	TTL     time.Duration
	Lister  Lister
	// Now is the clock; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Removed, when set, is told each session whose workspace was removed
	// (the worker's tools.Workdir.Forget).
	Removed func(session string)
}

// Sweep removes the idle workspaces once and returns their sessions.
func (j *Janitor) Sweep(ctx context.Context) ([]string, error) {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	list, err := List(j.Workdir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, w := range list {
		if now().Sub(w.Modified) < j.TTL || backgroundRunning(w.Path) {
			continue
		}
		open, err := OpenWorkflows(ctx, j.Lister, w.Session)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(open) > 0 {
			continue
		}
		if err := Remove(j.Workdir, w.Session); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, w.Session)
		if j.Removed != nil {
			j.Removed(w.Session)
		}
		if j.Logger != nil {
			j.Logger.Info("removed an idle workspace", "session", w.Session, "bytes", w.Bytes, "idle", now().Sub(w.Modified).Round(time.Second), "ttl", j.TTL)
		}
	}
	return removed, errors.Join(errs...)
}

// Run sweeps at once and then every TTL/4, at least once a minute, until
// ctx ends.
func (j *Janitor) Run(ctx context.Context) {
	every := min(max(j.TTL/4, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := j.Sweep(ctx); err != nil && ctx.Err() == nil && j.Logger != nil {
			j.Logger.Warn("workspace sweep: some idle workspaces were kept", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// backgroundRunning reports whether a background command of the
// workspace has a status with no end: it may still run.
func backgroundRunning(ws string) bool {
	dir := filepath.Join(ws, tools.ReservedDir, "background")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return true // unreadable: keep the workspace
		}
		var st struct {
			Ended *time.Time `json:"ended"`
		}
		if json.Unmarshal(b, &st) != nil || st.Ended == nil {
			return true
		}
	}
	return false
}
