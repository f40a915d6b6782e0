package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/internal/text"
)

// Workspace modes (W1): WORKSPACE=shared, the default, acts in
// TOOLS_WORKDIR for every session; WORKSPACE=session gives each session
// its own folder, TOOLS_WORKDIR/sessions/<session_id>/.
const (
	WorkspaceShared  = "shared"
	WorkspaceSession = "session"
	// EnvWorkspace names the mode's variable.
	EnvWorkspace = "WORKSPACE"
	// SessionsDir is the folder of TOOLS_WORKDIR that holds the sessions'
	// workspaces in session mode.
	SessionsDir = "sessions"
	// MaxSessionIDLen is the longest session id that names a workspace, as
	// for a round's session_id (T6).
	MaxSessionIDLen = 128
)

// OpenWorkspaces opens dir (TOOLS_WORKDIR) in mode. In session mode it
// makes the sessions folder and refuses a file system that folds case,
// where two session ids that differ in case would share one folder.
func OpenWorkspaces(dir, mode string) (*Workdir, error) {
	switch mode {
	case "", WorkspaceShared:
		return OpenWorkdir(dir)
	case WorkspaceSession:
	default:
		return nil, fmt.Errorf("%s=%q: want shared or session", EnvWorkspace, mode)
	}
	w, err := OpenWorkdir(dir)
	if err != nil {
		return nil, err
	}
	w.mode = WorkspaceSession
	w.sessions = map[string]*Workdir{}
	if err := w.root.MkdirAll(SessionsDir, 0o755); err != nil {
		w.Close()
		return nil, fmt.Errorf("workdir: %s: %w", SessionsDir, err)
	}
	if fi, err := w.root.Lstat(SessionsDir); err != nil || !fi.IsDir() {
		w.Close()
		return nil, fmt.Errorf("workdir: %s is not a folder", filepath.Join(w.dir, SessionsDir))
	}
	folds, err := foldsCase(w.dir)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("workdir: checking whether %s folds case: %w", w.dir, err)
	}
	if folds {
		w.Close()
		return nil, fmt.Errorf("%s=session: the file system of %s folds case, so sessions whose ids differ only in case would share a workspace; use a case-sensitive file system", EnvWorkspace, w.dir)
	}
	return w, nil
}

// foldsCase reports whether dir's file system finds a name under another
// case: it makes a file with a lower-case name and looks for it in upper case.
var foldsCase = func(dir string) (bool, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := ".case-probe-" + hex.EncodeToString(b)
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false, err
	}
	_ = f.Close()
	defer func() { _ = os.Remove(p) }()
	_, err = os.Lstat(filepath.Join(dir, strings.ToUpper(name)))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

// Mode is WorkspaceShared or WorkspaceSession.
func (w *Workdir) Mode() string {
	if w.mode == "" {
		return WorkspaceShared
	}
	return w.mode
}

// PerSession reports whether each session has a workspace of its own.
func (w *Workdir) PerSession() bool { return w.mode == WorkspaceSession && w.session == "" }

// SessionID is the session whose workspace this is; "" for TOOLS_WORKDIR.
func (w *Workdir) SessionID() string { return w.session }

// SetMaxBytes sets WORKSPACE_MAX_BYTES for the sessions' workspaces
// (W3); 0 is no limit. Call it before the first Session.
func (w *Workdir) SetMaxBytes(n int64) { w.maxBytes = n }

// MaxBytes is the workspace's size limit; 0 is none.
func (w *Workdir) MaxBytes() int64 { return w.maxBytes }

// CheckSessionID says what keeps id from naming a workspace folder: it
// must be a round's session_id, 1 to 128 letters, digits, '.', '_' or '-',
// starting with a letter or digit, so that it is never empty, ".", "..",
// nor holds a '/', a NUL or anything a file system might change.
func CheckSessionID(id string) error {
	if id == "" {
		return errors.New("workspace: the session id is empty")
	}
	if len(id) > MaxSessionIDLen {
		return fmt.Errorf("workspace: the session id is %d bytes, more than %d", len(id), MaxSessionIDLen)
	}
	if !text.PlainName(id) {
		return fmt.Errorf("workspace: session id %q cannot name a folder: use letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// Session is the workspace of session id: w itself in shared mode; in
// session mode TOOLS_WORKDIR/sessions/<id>/, made on first use with its
// own reserved folder. A workspace folder removed from outside is made
// anew; one replaced by a link or a file is refused.
func (w *Workdir) Session(id string) (*Workdir, error) {
	if !w.PerSession() {
		return w, nil
	}
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	rel := SessionsDir + "/" + id
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.sessions[id]; s != nil {
		if s.stillThere(w.root, rel) {
			s.markUse()
			return s, nil
		}
		delete(w.sessions, id)
		w.changes.Add(1)
	}
	if err := w.root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	if fi, err := w.root.Lstat(rel); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s: %s is not a folder", id, filepath.Join(w.dir, rel))
	}
	root, err := w.root.OpenRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	s := &Workdir{dir: filepath.Join(w.dir, SessionsDir, id), root: root, mode: WorkspaceSession, session: id, maxBytes: w.maxBytes}
	if !s.stillThere(w.root, rel) {
		_ = root.Close()
		return nil, fmt.Errorf("workspace %s: its folder changed while it was opened", id)
	}
	if err := root.MkdirAll(ReservedDir, 0o755); err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	w.sessions[id] = s
	s.markUse()
	return s, nil
}

// markUse sets the modification time of the workspace's reserved folder
// to now, at most twice a minute: WORKSPACE_TTL counts idleness from the
// newest change in a workspace, and a call that changes nothing is a use
// too (W3).
func (s *Workdir) markUse() {
	now := time.Now()
	if now.Sub(s.marked) < 30*time.Second {
		return
	}
	if s.root.Chtimes(ReservedDir, now, now) == nil {
		s.marked = now
	}
}

// current reports whether s is the workspace its session has now: not one
// whose folder was made anew, nor one forgotten (Forget).
func (w *Workdir) current(s *Workdir) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions[s.session] == s
}

// Forget drops the session's workspace from those w holds open, after its
// folder was removed (WORKSPACE_TTL, starter workspace rm): the next call of
// the session makes it anew, and the tools' state kept for the old one is
// stopped at the next call of any session (PerSession).
func (w *Workdir) Forget(session string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.sessions[session]; s != nil {
		_ = s.root.Close()
		delete(w.sessions, session)
		w.changes.Add(1)
	}
}

// stillThere reports whether the folder at rel of parent is the one s has
// open.
func (s *Workdir) stillThere(parent *os.Root, rel string) bool {
	now, err := parent.Lstat(rel)
	if err != nil || !now.IsDir() {
		return false
	}
	open, err := s.root.Stat(".")
	return err == nil && os.SameFile(now, open)
}

type sessionKey struct{}

// WithSession marks ctx with the session a call belongs to; the
// activities set it from the round's input or workflow id, and For reads
// it.
func WithSession(ctx context.Context, sessionID string) context.Context {
	return context.WithValue(ctx, sessionKey{}, sessionID)
}

// SessionFrom is the session WithSession set; "" when none.
func SessionFrom(ctx context.Context) string {
	s, _ := ctx.Value(sessionKey{}).(string)
	return s
}

// For is the workspace of the call that ctx belongs to: w in shared mode;
// in session mode the workspace of its session, and an error when ctx
// names no session.
func (w *Workdir) For(ctx context.Context) (*Workdir, error) {
	if !w.PerSession() {
		return w, nil
	}
	id := SessionFrom(ctx)
	if id == "" {
		return nil, errors.New("workspace: WORKSPACE=session, and the call carries no session id")
	}
	return w.Session(id)
}

// PerSession makes definitions act in each session's own workspace. build
// makes the definitions (and their state) for one workspace and returns
// what stops them (nil: nothing). In shared mode that is build(w). In
// session mode build(w) is the template whose names, schemas and
// workflow-side fields are served; each definition's Handler, Changed and
// Reconcile run those of the same definition built for the call's
// session, once per workspace and kept while its folder stays.
func PerSession(w *Workdir, build func(*Workdir) ([]Definition, func(), error)) ([]Definition, func(), error) {
	defs, stop, err := build(w)
	if err != nil {
		return nil, nil, err
	}
	ps := &perSession{w: w, build: build, sets: map[*Workdir]*defSet{}}
	ps.addStop(stop)
	if !w.PerSession() {
		return defs, ps.close, nil
	}
	for i := range defs {
		d := &defs[i]
		if d.Handler != nil {
			d.Handler = func(ctx context.Context, req Request) (Result, error) {
				s, err := ps.def(ctx, i)
				if err != nil {
					return Result{}, err
				}
				return s.Handler(ctx, req)
			}
		}
		if d.Changed != nil {
			d.Changed = func(ctx context.Context, files map[string]FileState) []string {
				s, err := ps.def(ctx, i)
				if err != nil {
					out := make([]string, 0, len(files))
					for p := range files {
						out = append(out, p)
					}
					return out
				}
				return s.Changed(ctx, files)
			}
		}
		if d.Reconcile != nil {
			d.Reconcile = func(ctx context.Context, req Request) (Reconciliation, error) {
				s, err := ps.def(ctx, i)
				if err != nil {
					return Reconciliation{Verdict: VerdictUnknown, Content: err.Error()}, nil
				}
				return s.Reconcile(ctx, req)
			}
		}
	}
	return defs, ps.close, nil
}

type perSession struct {
	w     *Workdir
	build func(*Workdir) ([]Definition, func(), error)

	mu   sync.Mutex
	sets map[*Workdir]*defSet
	// seen is the Workdir's count of changes the sets were last checked at.
	seen uint64
	// stops are the template's and those of the sets still kept.
	stops []func()
}

// defSet is the definitions built for one workspace and what stops them.
type defSet struct {
	defs []Definition
	stop func()
}

func (ps *perSession) addStop(stop func()) {
	if stop != nil {
		ps.stops = append(ps.stops, stop)
	}
}

// def is definition i as built for the workspace of ctx's session. The sets
// of workspaces that are no longer current (made anew, or forgotten after
// their removal) are stopped and dropped.
func (ps *perSession) def(ctx context.Context, i int) (*Definition, error) {
	wd, err := ps.w.For(ctx)
	if err != nil {
		return nil, err
	}
	ps.mu.Lock()
	var stale []func()
	if gen := ps.w.changes.Load(); gen != ps.seen {
		ps.seen = gen
		for k, old := range ps.sets {
			if !ps.w.current(k) {
				delete(ps.sets, k)
				if old.stop != nil {
					stale = append(stale, old.stop)
				}
			}
		}
	}
	set, ok := ps.sets[wd]
	if !ok {
		defs, stop, err := ps.build(wd)
		if err != nil {
			ps.mu.Unlock()
			return nil, err
		}
		set = &defSet{defs: defs, stop: stop}
		ps.sets[wd] = set
	}
	ps.mu.Unlock()
	for _, stop := range stale {
		stop()
	}
	if i >= len(set.defs) {
		return nil, fmt.Errorf("workspace %s: the tools built for it differ from the template", wd.session)
	}
	return &set.defs[i], nil
}

func (ps *perSession) close() {
	ps.mu.Lock()
	stops := ps.stops
	for k, set := range ps.sets {
		if set.stop != nil {
			stops = append(stops, set.stop)
		}
		delete(ps.sets, k)
	}
	ps.stops = nil
	ps.mu.Unlock()
	for _, s := range stops {
		s()
	}
}
