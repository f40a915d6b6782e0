package console

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/workspace"
	"github.com/toolround/toolround/round/names"
)

// The workspaces of WORKSPACE=session (W3): listed, measured and removed
// in Options.Workdir; a session outside a token's scope reads as one with
// no workspace (404), as its rounds do.

// workdir is Options.Workdir, or the 501 that says it is not set.
func (s *Server) workdir() (string, error) {
	if s.opts.Workdir == "" {
		return "", fmt.Errorf("%w: the console was started without TOOLS_WORKDIR, the workers' folder of workspaces", ErrUnsupported)
	}
	return s.opts.Workdir, nil
}

// workspaceSession is the {session} of the path, checked and in p's scope.
func (s *Server) workspaceSession(r *http.Request, p principal) (string, error) {
	session := r.PathValue("session")
	if !names.ValidIdentifier(session) {
		return "", fmt.Errorf("%w: session %q is not a session id", ErrBadInput, session)
	}
	if !p.allows(session) {
		return "", fmt.Errorf("session %s has no workspace: %w", session, ErrNotFound)
	}
	return session, nil
}

func notFoundWorkspace(session string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s has no workspace: %w", session, ErrNotFound)
	}
	return err
}

// getWorkspaces lists the workspaces p may see.
func (s *Server) getWorkspaces(w http.ResponseWriter, r *http.Request, p principal) {
	dir, err := s.workdir()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := workspace.List(dir)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := []workspace.Info{}
	for _, info := range list {
		if p.allows(info.Session) {
			out = append(out, info)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// getWorkspace is one workspace's size.
func (s *Server) getWorkspace(w http.ResponseWriter, r *http.Request, p principal) {
	dir, err := s.workdir()
	if err == nil {
		var session string
		if session, err = s.workspaceSession(r, p); err == nil {
			var info workspace.Info
			if info, err = workspace.Usage(dir, session); err == nil {
				writeJSON(w, http.StatusOK, info)
				return
			}
			err = notFoundWorkspace(session, err)
		}
	}
	s.fail(w, r, err)
}

// deleteWorkspace removes a workspace whose session has no round or agent
// run open; 409 workspace_busy while one is.
func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request, p principal) {
	if err := s.removeWorkspace(r.Context(), r, p); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"session": r.PathValue("session"), "removed": true})
}

func (s *Server) removeWorkspace(ctx context.Context, r *http.Request, p principal) error {
	dir, err := s.workdir()
	if err != nil {
		return err
	}
	session, err := s.workspaceSession(r, p)
	if err != nil {
		return err
	}
	if _, err := workspace.Usage(dir, session); err != nil {
		return notFoundWorkspace(session, err)
	}
	open, err := s.b.OpenWorkflows(ctx, session)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return fmt.Errorf("%w: %v", ErrWorkspaceBusy, &workspace.BusyError{Session: session, Open: open})
	}
	return notFoundWorkspace(session, workspace.Remove(dir, session))
}

// moveBody is POST /api/v1/workspaces/{session}/move's body.
type moveBody struct {
	Host string `json:"host"`
}

// moveWorkspace rebinds a session's workspace to a host (W4, W5), through
// its workspace/<session> workflow: 409 placement_off when the workers
// keep every workspace in one folder, workspace_busy while a round or
// agent run of the session is open, host_unavailable when no worker of
// the host polls its queue. Files do not follow unless the folder is
// shared storage.
func (s *Server) moveWorkspace(w http.ResponseWriter, r *http.Request, p principal) {
	session, err := s.workspaceSession(r, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if s.opts.Placement != placement.Host {
		s.fail(w, r, fmt.Errorf("%w: the workers keep workspaces in one folder every host sees (WORKSPACE_PLACEMENT=shared), so there is no host to move it from or to", ErrPlacementOff))
		return
	}
	var body moveBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := placement.CheckHostID(body.Host); err != nil {
		s.fail(w, r, fmt.Errorf("%w: host: %v", ErrBadInput, err))
		return
	}
	open, err := s.b.OpenWorkflows(r.Context(), session)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(open) > 0 {
		s.fail(w, r, fmt.Errorf("%w: %v", ErrWorkspaceBusy, &workspace.BusyError{Session: session, Open: open}))
		return
	}
	b, err := s.b.MoveWorkspace(r.Context(), session, body.Host)
	if placement.IsHostUnavailable(err) {
		err = fmt.Errorf("%w: %v", ErrHostUnavailable, text.RootMessage(err))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("workspace moved", "session", session, "host", b.Host, "generation", b.Generation, "by", p.Name)
	writeJSON(w, http.StatusOK, map[string]any{"session": session, "host": b.Host, "generation": b.Generation})
}
