package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// busyFake is a fakeBackend whose sessions named in open have a round open.
type busyFake struct {
	*fakeBackend
	open map[string][]string
}

func (f *busyFake) OpenWorkflows(_ context.Context, session string) ([]string, error) {
	return f.open[session], nil
}

func newWorkspaceServer(t *testing.T, workdir string) (*httptest.Server, *busyFake) {
	t.Helper()
	f := &busyFake{fakeBackend: newFake(), open: map[string][]string{"busy": {"toolround/busy/r/1"}}}
	s, err := New(Options{Backend: f, Workdir: workdir, Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover},
		{Secret: agentToken, Name: "bot", Role: RoleAgent},
		{Secret: "scoped-token-0123456789ab", Name: "carol", Role: RoleApprover, Sessions: []string{"idle"}},
	}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, f
}

// W3: GET /api/v1/workspaces lists the workspaces a token may see; GET
// one is its size; DELETE one needs an approver and answers 409
// workspace_busy while a round of the session is open.
func TestWorkspaceAPI(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"idle", "busy"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sessions", s, ".toolround"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sessions", s, "f.txt"), []byte("12345"), 0o644))
	}
	ts, _ := newWorkspaceServer(t, dir)

	code, body := doAny(t, ts, "GET", "/api/v1/workspaces", agentToken)
	require.Equal(t, http.StatusOK, code)
	list := body.([]any)
	require.Len(t, list, 2)
	require.Equal(t, "busy", list[0].(map[string]any)["session"])
	require.EqualValues(t, 5, list[0].(map[string]any)["bytes"])

	code, body = doAny(t, ts, "GET", "/api/v1/workspaces", "scoped-token-0123456789ab")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, body.([]any), 1, "a scoped token sees its sessions' workspaces only")

	code, one := do(t, ts, "GET", "/api/v1/workspaces/idle", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "idle", one["session"])
	code, one = do(t, ts, "GET", "/api/v1/workspaces/nobody", agentToken, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", one["error"])
	code, one = do(t, ts, "GET", "/api/v1/workspaces/busy", "scoped-token-0123456789ab", "")
	require.Equal(t, http.StatusNotFound, code, "outside the token's scope reads as no such workspace")
	require.Equal(t, "not_found", one["error"])
	code, one = do(t, ts, "GET", "/api/v1/workspaces/..", agentToken, "")
	require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, code)
	require.NotEqual(t, "idle", one["session"])
	code, one = do(t, ts, "GET", "/api/v1/workspaces/-x", agentToken, "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "bad_request", one["error"])

	code, one = do(t, ts, "DELETE", "/api/v1/workspaces/idle", agentToken, "")
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "forbidden", one["error"])
	require.DirExists(t, filepath.Join(dir, "sessions", "idle"))
	code, one = do(t, ts, "DELETE", "/api/v1/workspaces/busy", approverToken, "")
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "workspace_busy", one["error"])
	require.Contains(t, one["message"], "toolround/busy/r/1")
	require.DirExists(t, filepath.Join(dir, "sessions", "busy"))
	code, one = do(t, ts, "DELETE", "/api/v1/workspaces/busy", "scoped-token-0123456789ab", "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", one["error"])
	code, one = do(t, ts, "DELETE", "/api/v1/workspaces/idle", approverToken, "")
	require.Equal(t, http.StatusOK, code, "%v", one)
	require.Equal(t, true, one["removed"])
	require.NoDirExists(t, filepath.Join(dir, "sessions", "idle"))
	code, _ = do(t, ts, "DELETE", "/api/v1/workspaces/idle", approverToken, "")
	require.Equal(t, http.StatusNotFound, code)

	code, one = do(t, ts, "POST", "/api/v1/workspaces/busy/move", approverToken, `{"host":"h2"}`)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "placement_off", one["error"])
	require.Contains(t, one["message"], "WORKSPACE_PLACEMENT=shared")
	code, _ = do(t, ts, "PUT", "/api/v1/workspaces", approverToken, "")
	require.Equal(t, http.StatusMethodNotAllowed, code)

	// A console without TOOLS_WORKDIR cannot see the workspaces.
	bare, _ := newWorkspaceServer(t, "")
	code, one = do(t, bare, "GET", "/api/v1/workspaces", agentToken, "")
	require.Equal(t, http.StatusNotImplemented, code)
	require.Contains(t, one["message"], "TOOLS_WORKDIR")
}

// doAny is do for a body of any JSON shape.
func doAny(t *testing.T, ts *httptest.Server, method, path, token string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// W4, W5: with WORKSPACE_PLACEMENT=host, POST .../move rebinds the
// workspace (an approver's, 200 with the binding), answers 409
// workspace_busy while a round of the session is open, 409
// host_unavailable for a host with no live worker, and 400 for a host
// that is not a HOST_ID.
func TestWorkspaceMoveWithPlacement(t *testing.T) {
	f := &busyFake{fakeBackend: newFake(), open: map[string][]string{"busy": {"toolround/busy/r/1"}}}
	s, err := New(Options{Backend: f, Placement: "host", Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover},
		{Secret: agentToken, Name: "bot", Role: RoleAgent},
	}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	code, one := do(t, ts, "POST", "/api/v1/workspaces/idle/move", approverToken, `{"host":"h2"}`)
	require.Equal(t, http.StatusOK, code, "%v", one)
	require.Equal(t, "h2", one["host"])
	require.EqualValues(t, 2, one["generation"])
	code, one = do(t, ts, "POST", "/api/v1/workspaces/idle/move", agentToken, `{"host":"h2"}`)
	require.Equal(t, http.StatusForbidden, code, "%v", one)
	code, one = do(t, ts, "POST", "/api/v1/workspaces/busy/move", approverToken, `{"host":"h2"}`)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "workspace_busy", one["error"])
	code, one = do(t, ts, "POST", "/api/v1/workspaces/idle/move", approverToken, `{"host":"dead"}`)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "host_unavailable", one["error"])
	require.Contains(t, one["message"], "q@dead")
	code, one = do(t, ts, "POST", "/api/v1/workspaces/idle/move", approverToken, `{"host":"a/b"}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "bad_request", one["error"])
	code, one = do(t, ts, "POST", "/api/v1/workspaces/idle/move", approverToken, `{"host":"h2","x":1}`)
	require.Equal(t, http.StatusBadRequest, code, "%v", one)
}

// The id checks read workspace/<session> (W4) with its session, and no
// round or agent run endpoint takes it.
func TestWorkspaceBindingIDs(t *testing.T) {
	kind, session, ok := parseWorkflowID("workspace/s-1")
	require.True(t, ok)
	require.Equal(t, kindWorkspace, kind)
	require.Equal(t, "s-1", session)
	for _, bad := range []string{"workspace/", "workspace/a/b", "workspace/../x", "workspace/-a"} {
		_, _, ok := parseWorkflowID(bad)
		require.False(t, ok, bad)
	}
	_, _, err := checkID("workspace/s-1", kindRound|kindAgent)
	require.ErrorIs(t, err, ErrNotFound)
	_, _, err = checkID("workspace/s-1", kindWorkspace)
	require.NoError(t, err)
}
