package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestGatewayToolNamesZ2: names are 1-64 characters of [A-Za-z0-9_.-]; a
// longer or stranger upstream name is shortened with a hash suffix, and
// two names never collide into one.
func TestGatewayToolNamesZ2(t *testing.T) {
	ok := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	require.Equal(t, "read_files", GatewayToolName("read_files"))
	long := "mcp__" + strings.Repeat("server", 10) + "__" + strings.Repeat("tool", 10)
	a, b := GatewayToolName(long+"1"), GatewayToolName(long+"2")
	require.Regexp(t, ok, a)
	require.NotEqual(t, a, b)
	require.Regexp(t, ok, GatewayToolName("weird name/with:chars"))
	require.NotEqual(t, GatewayToolName("a b"), GatewayToolName("a_b"))
}

// TestGatewayPicksAndAnnotatesZ2: the built-ins MCP_GATEWAY_TOOLS allows
// (default the read-only ones, edit_file and run_command, never agent
// tools), every tool of another source, and annotations that say what
// this system does.
func TestGatewayPicksAndAnnotatesZ2(t *testing.T) {
	all := []round.GatewayTool{
		{Spec: round.FunctionSpec{Name: "read_files"}, Source: "builtin", ReadOnly: true, Workspace: true},
		{Spec: round.FunctionSpec{Name: "edit_file"}, Source: "builtin", Workspace: true},
		{Spec: round.FunctionSpec{Name: "remove_file"}, Source: "builtin", Workspace: true},
		{Spec: round.FunctionSpec{Name: "subagents"}, Source: "builtin", ReadOnly: true, Agent: true},
		{Spec: round.FunctionSpec{Name: "lookup"}, Source: "user", ReadOnly: true},
		{Spec: round.FunctionSpec{Name: "mcp__s__write"}, Source: "mcp"},
	}
	names := func(g *gateway) []string {
		var out []string
		for _, t := range g.pick(all) {
			out = append(out, t.name)
		}
		return out
	}
	require.Equal(t, []string{"read_files", "edit_file", "lookup", "mcp__s__write"}, names(&gateway{}))
	require.Equal(t, []string{"remove_file", "lookup", "mcp__s__write"}, names(&gateway{opts: GatewayOptions{Tools: []string{"remove_file"}}}))

	ro := annotations(all[0])
	require.True(t, ro.ReadOnlyHint && ro.IdempotentHint)
	require.False(t, *ro.DestructiveHint || *ro.OpenWorldHint)
	ed := annotations(all[1])
	require.False(t, ed.ReadOnlyHint || ed.IdempotentHint)
	require.True(t, *ed.DestructiveHint)
	require.False(t, *ed.OpenWorldHint)
	up := annotations(all[5])
	require.True(t, *up.OpenWorldHint && *up.DestructiveHint)
	require.False(t, up.ReadOnlyHint)
}

// gatewayFake is the fake backend with a gateway: one read-only tool and
// an edit whose round ends when release is closed.
type gatewayFake struct {
	*fakeBackend
	release chan struct{}
	calls   atomic.Int32
}

func (g *gatewayFake) GatewayTools(context.Context) ([]round.GatewayTool, error) {
	return []round.GatewayTool{{Spec: round.FunctionSpec{Name: "edit_file", Parameters: json.RawMessage(`{"type":"object"}`)}, Source: "builtin"}}, nil
}

func (g *gatewayFake) GatewayCall(_ context.Context, session, run string, c round.GatewayCall) (round.GatewayTicket, error) {
	g.calls.Add(1)
	return round.GatewayTicket{WorkflowID: names.WorkflowID(session, names.GatewayRunID(run), 1), CallID: "mcp_1_0", Round: 1}, nil
}

func (g *gatewayFake) Wait(ctx context.Context, id string) (*round.Result, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &round.Result{WorkflowID: id, Results: []round.CallResult{{CallID: "mcp_1_0", Tool: "edit_file", Status: round.StatusOK, Content: "edited", OperationID: "op1"}}}, nil
}

// TestGatewayProgressWhileWaitingZ3: a waiting call whose request carries
// a progress token gets progress every ProgressEvery, and its result
// comes as MCP content with the _meta that names it (Z4).
func TestGatewayProgressWhileWaitingZ3(t *testing.T) {
	g := &gatewayFake{fakeBackend: newFake(), release: make(chan struct{})}
	s, err := New(Options{Backend: g, Tokens: []Token{{Secret: "agent-token", Name: "bot", Role: RoleAgent}},
		Gateway: GatewayOptions{ProgressEvery: 20 * time.Millisecond}})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.opts.BaseURL = srv.URL

	var progress atomic.Int32
	cl := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if progress.Add(1) == 3 {
				close(g.release)
			}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + GatewayPath + "?session=s1&run=r",
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r.Header.Set("Authorization", "Bearer agent-token")
			return http.DefaultTransport.RoundTrip(r)
		})}}, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	p := &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "a"}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	require.NoError(t, err)
	require.GreaterOrEqual(t, progress.Load(), int32(3), "progress came while the call waited")
	require.False(t, res.IsError)
	require.Equal(t, "edited", res.Content[0].(*mcp.TextContent).Text)
	require.Equal(t, "op1", res.Meta["dev.toolround/operation_id"])
	require.Equal(t, "toolround/s1/mcp-r/1", res.Meta["dev.toolround/workflow_id"])
	require.Equal(t, int32(1), g.calls.Load())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (g *gatewayFake) GrantBlob(context.Context, string, string) error { return nil }

func (g *gatewayFake) ReadBlob(context.Context, string, string) (string, error) {
	return "", ErrNotFound
}

// FuzzGatewayRequest posts any body, at any revision, through the
// gateway's own JSON-RPC layer and the SDK's server: every answer is an
// HTTP status with a body, never a panic or a hang.
func FuzzGatewayRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"a"},"task":{"ttl":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"toolround/s1/mcp-r/1/mcp_1_0"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"/"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"toolround://blob/../../x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{`, `null`, `"x"`, ``,
	} {
		f.Add(seed, "2025-11-25")
		f.Add(seed, "2026-07-28")
	}
	g := &gatewayFake{fakeBackend: newFake(), release: make(chan struct{})}
	close(g.release)
	s, err := New(Options{Backend: g, Tokens: []Token{{Secret: "agent-token", Name: "bot", Role: RoleAgent}}})
	require.NoError(f, err)
	s.opts.BaseURL = "http://127.0.0.1:1"
	f.Fuzz(func(t *testing.T, body, revision string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:1"+GatewayPath+"?session=s1&run=r", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer agent-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", revision)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		require.NotZero(t, w.Code)
		require.NoError(t, ctx.Err(), "the gateway answered in time")
	})
}
