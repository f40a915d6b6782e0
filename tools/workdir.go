package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ReservedDir is the folder inside the workdir where the tools keep their own
// state (file versions, background command output); tool calls cannot name it.
const ReservedDir = ".toolround"

// Workdir confines file and command tools to one directory (TOOLS_WORKDIR).
// File access goes through an os.Root, so neither "..", absolute paths nor
// symlinks can reach outside it, including symlinks swapped in mid-call.
//
// In session mode (OpenWorkspaces, W1) the Workdir opened on TOOLS_WORKDIR
// holds one Workdir a session, TOOLS_WORKDIR/sessions/<id>/ (Session, For);
// the tools act only in those.
type Workdir struct {
	dir  string
	root *os.Root
	// mode is WorkspaceShared or WorkspaceSession; session is set on a
	// session's own workspace.
	mode    string
	session string
	// maxBytes is WORKSPACE_MAX_BYTES (0: no limit), set on every
	// session's workspace.
	maxBytes int64
	// marked is when markUse last marked the workspace used.
	marked time.Time

	mu       sync.Mutex
	sessions map[string]*Workdir
	// changes counts the workspaces dropped from sessions, for PerSession.
	changes atomic.Uint64
}

// OpenWorkdir creates dir if needed and opens it as the tools' root.
func OpenWorkdir(dir string) (*Workdir, error) {
	if dir == "" {
		return nil, errors.New("workdir: TOOLS_WORKDIR is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("workdir: create %q: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workdir: %q: %w", dir, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("workdir: %q: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workdir: open %q: %w", abs, err)
	}
	return &Workdir{dir: abs, root: root, mode: WorkspaceShared}, nil
}

// Dir is the absolute path of the workdir.
func (w *Workdir) Dir() string { return w.dir }

// Root gives confined file access; every path given to it is relative.
func (w *Workdir) Root() *os.Root { return w.root }

// Close releases the root and those of the sessions' workspaces.
func (w *Workdir) Close() error {
	w.mu.Lock()
	for id, s := range w.sessions {
		_ = s.root.Close()
		delete(w.sessions, id)
	}
	w.mu.Unlock()
	return w.root.Close()
}

// Rel turns a path from a tool call into a clean path relative to the
// workdir ("." for the workdir itself). It refuses paths that leave it and the
// reserved state folder. Symlinks are checked when the path is used.
func (w *Workdir) Rel(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is empty")
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(w.dir, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("path %q is outside the workdir", p)
		}
		p = rel
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q is outside the workdir", p)
	}
	if clean == ReservedDir || strings.HasPrefix(clean, ReservedDir+"/") {
		return "", fmt.Errorf("path %q is reserved for the tools' own state", p)
	}
	return clean, nil
}

// Covers reports whether path a is b or a folder that holds b; both are
// workdir-relative clean paths (P3.3).
func Covers(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	return a == b || a == "." || strings.HasPrefix(b, a+"/")
}
