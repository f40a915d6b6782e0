package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// gatewayURL is console c's MCP gateway for session and run.
func gatewayURL(c *consoleProc, session, run string) string {
	return fmt.Sprintf("%s/api/v1/mcp?session=%s&run=%s", c.url, session, run)
}

// gatewayClient connects the MCP Go SDK's client to the console's gateway
// for session and run with token.
func gatewayClient(t *testing.T, ctx context.Context, c *consoleProc, token, session, run string) (*mcp.ClientSession, error) {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:   gatewayURL(c, session, run),
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}},
	}
	return cl.Connect(ctx, tr, nil)
}

// agentGatewayClient is gatewayClient with console c's agent token,
// which must connect; it is closed when the test ends.
func agentGatewayClient(t *testing.T, ctx context.Context, c *consoleProc, session, run string) *mcp.ClientSession {
	t.Helper()
	cs, err := gatewayClient(t, ctx, c, c.agent, session, run)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// waitingCall is the workflow and call of the session's one waiting
// gateway call, once the inbox lists it.
func waitingCall(t *testing.T, c *consoleProc, session string) (wfID, callID, approvalID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/inbox?session="+session, c.approver, nil)
		var inbox []struct {
			WorkflowID string           `json:"workflow_id"`
			Pending    []map[string]any `json:"pending"`
		}
		if r.code != http.StatusOK {
			return false
		}
		if r.json(t, &inbox); len(inbox) != 1 || len(inbox[0].Pending) != 1 {
			return false
		}
		wfID = inbox[0].WorkflowID
		callID, _ = inbox[0].Pending[0]["call_id"].(string)
		approvalID, _ = inbox[0].Pending[0]["approval_id"].(string)
		return approvalID != ""
	}, 60*time.Second, 100*time.Millisecond, "no gateway call waits in the inbox")
	return wfID, callID, approvalID
}

// callInBackground makes a call while the test goes on; an error comes as
// an isError result that carries its text.
func callInBackground(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams) <-chan *mcp.CallToolResult {
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			r = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		got <- r
	}()
	return got
}

func metaOf(r *mcp.CallToolResult, k string) string {
	v, _ := r.Meta[k].(string)
	return v
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPGatewayGoClientZ5 drives the gateway with the MCP Go SDK's client
// through the real console and worker: tools/list with this system's
// annotations, a read-only call, an edit that waits and is approved in
// the console, a call whose client went away while the worker was killed
// and that the client, reconnected to another console (O3: the gateway
// keeps nothing in a console), gets once.
func TestMCPGatewayGoClientZ5(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	consoles := e.startConsoles(2)
	c, other := consoles[0], consoles[1]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("one\ntwo\n"), 0o644))

	cs := agentGatewayClient(t, ctx, c, e.session, "r1")

	// tools/list: the built-ins the gateway allows, with annotations that
	// tell this system's truth, and none of find_tools, run_tool or the
	// interactive tools.
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range lt.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"read_files", "edit_file", "run_command"} {
		require.Contains(t, byName, want)
	}
	for _, never := range []string{"find_tools", "run_tool", "ask_user", "subagents", "background_subagents"} {
		require.NotContains(t, byName, never)
	}
	rf, ef := byName["read_files"].Annotations, byName["edit_file"].Annotations
	require.True(t, rf.ReadOnlyHint)
	require.True(t, rf.IdempotentHint)
	require.False(t, *rf.DestructiveHint)
	require.False(t, *rf.OpenWorldHint, "read_files acts only in the workspace")
	require.False(t, ef.ReadOnlyHint)
	require.False(t, ef.IdempotentHint)
	require.True(t, *ef.DestructiveHint)

	// A read-only call runs at once, on its first call (no find_tools).
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"paths": []string{"notes.txt"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	require.Contains(t, textOf(res), "two")
	require.Equal(t, "ok", metaOf(res, "dev.toolround/status"))
	require.True(t, strings.HasPrefix(metaOf(res, "dev.toolround/workflow_id"), "toolround/"+e.session+"/mcp-r1/"), metaOf(res, "dev.toolround/workflow_id"))

	// An edit waits for a person; approved in the console, it runs.
	got := callInBackground(ctx, cs, &mcp.CallToolParams{Name: "edit_file",
		Arguments: map[string]any{"path": "notes.txt", "old_text": "two", "new_text": "2"}})
	wfID, callID, approvalID := waitingCall(t, c, e.session)
	r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = <-got
	require.False(t, res.IsError, textOf(res))
	require.Equal(t, wfID, metaOf(res, "dev.toolround/workflow_id"))
	b, err := os.ReadFile(filepath.Join(e.workdir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "one\n2\n", string(b))

	// The client goes away while its edit waits and the worker is
	// killed; a new worker and the client, reconnected to the other
	// console, sending the same call attach to it: one result, and the
	// edit ran once.
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "once.txt"), []byte("x\n"), 0o644))
	edit := &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "once.txt", "old_text": "x", "new_text": "xy"}}
	gone, goneCancel := context.WithCancel(ctx)
	lost := make(chan error, 1)
	go func() { _, err := cs.CallTool(gone, edit); lost <- err }()
	wfID, callID, approvalID = waitingCall(t, c, e.session)
	w.kill(t)
	goneCancel()
	require.Error(t, <-lost)
	e.startWorker()
	cs2 := agentGatewayClient(t, ctx, other, e.session, "r1")
	got = callInBackground(ctx, cs2, edit)
	// The reconnected call attached: still the one waiting call.
	w2, c2, a2 := waitingCall(t, c, e.session)
	require.Equal(t, []string{wfID, callID, approvalID}, []string{w2, c2, a2})
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = <-got
	require.False(t, res.IsError, textOf(res))
	require.Equal(t, wfID, metaOf(res, "dev.toolround/workflow_id"))
	require.Equal(t, callID, metaOf(res, "dev.toolround/call_id"))
	b, err = os.ReadFile(filepath.Join(e.workdir, "once.txt"))
	require.NoError(t, err)
	require.Equal(t, "xy\n", string(b), "the edit ran once")

	// Large results (Z4): two calls of one round above the round's result
	// budget; the one kept as a blob comes as a preview and a
	// resource_link that resources/read gives whole, to this session only.
	var paths []string
	for i := range 4 {
		p := fmt.Sprintf("big%d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(e.workdir, p), []byte(strings.Repeat(fmt.Sprintf("line %d of a big file\n", i), 12000)), 0o644))
		paths = append(paths, p)
	}
	var bigs []<-chan *mcp.CallToolResult
	for _, ps := range [][]string{paths, {paths[3], paths[2], paths[1], paths[0]}} {
		bigs = append(bigs, callInBackground(ctx, cs, &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"paths": ps}}))
	}
	var link *mcp.ResourceLink
	for _, big := range bigs {
		r := <-big
		require.False(t, r.IsError, textOf(r))
		for _, c := range r.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				link = l
				require.Less(t, len(textOf(r)), 20<<10, "a large result's text is a preview")
			}
		}
	}
	require.NotNil(t, link, "one result of the round was kept as a blob")
	require.True(t, strings.HasPrefix(link.URI, "toolround://blob/"), link.URI)
	whole, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	require.NoError(t, err)
	require.Greater(t, len(whole.Contents[0].Text), 512<<10)
	require.Contains(t, whole.Contents[0].Text, "line 3 of a big file")
	otherSession := agentGatewayClient(t, ctx, c, e.session+"-other", "r1")
	for _, uri := range []string{link.URI, "toolround://blob/" + strings.Repeat("0", 64), "toolround://blob/../x"} {
		_, err = otherSession.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		require.ErrorAs(t, err, &rpcErr, uri)
		require.Equal(t, int64(-32002), rpcErr.Code, "another session's blob, a blob that does not exist and a bad ref answer alike: %s", uri)
	}

	// A call to a tool it did not list is an error, never a round.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_tool", Arguments: map[string]any{"name": "read_files"}})
	require.Error(t, err)
	// Arguments that fail the schema: an isError result.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"nope": 1}})
	require.NoError(t, err)
	require.True(t, res.IsError, textOf(res))
}

// TestMCPGatewayRefusesZ1 checks the gateway's doors: no token, a page
// cookie's absence of one, a token out of scope, a wrong Host or Origin,
// bad session and run names, malformed JSON-RPC and unknown methods.
func TestMCPGatewayRefusesZ1(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	scoped := "scoped-" + fmt.Sprint(time.Now().UnixNano())
	tokens := filepath.Join(t.TempDir(), "tokens")
	approver, agent := "ap-"+fmt.Sprint(time.Now().UnixNano()), "ag-"+fmt.Sprint(time.Now().UnixNano())
	require.NoError(t, os.WriteFile(tokens, []byte(approver+" alice approver\n"+agent+" bot agent\n"+scoped+" narrow agent sessions=mine-*\n"), 0o600))
	c := &consoleProc{approver: approver, agent: agent, logs: &syncBuffer{}}
	e.runConsole(c, []string{"CONSOLE_TOKENS=" + tokens})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	post := func(path, token, body string, hdr ...string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, "POST", c.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, sb.String()
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	path := "/api/v1/mcp?session=" + e.session + "&run=r1"

	code, _ := post(path, "", list)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(path, "not-a-token", list)
	require.Equal(t, http.StatusUnauthorized, code)
	code, body := post(path, c.agent, list)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"read_files"`)

	// A token scoped to mine-* never lists or calls into another session.
	code, body = post(path, scoped, list)
	require.Equal(t, http.StatusForbidden, code, body)
	callRead := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_files","arguments":{"paths":["x"]}}}`
	code, _ = post(path, scoped, callRead)
	require.Equal(t, http.StatusForbidden, code)
	code, body = post("/api/v1/mcp?session=mine-1&run=r1", scoped, list)
	require.Equal(t, http.StatusOK, code, body)

	// DNS rebinding: another Host or Origin is refused, with a token.
	code, _ = post(path, c.agent, list, "Host", "evil.example:80")
	require.Equal(t, http.StatusForbidden, code)
	code, _ = post(path, c.agent, list, "Origin", "http://evil.example")
	require.Equal(t, http.StatusForbidden, code)
	code, body = post(path, c.agent, list, "Origin", c.url)
	require.Equal(t, http.StatusOK, code, body)

	// Bad session and run names.
	for _, p := range []string{"/api/v1/mcp", "/api/v1/mcp?session=a/b", "/api/v1/mcp?session=ok&run=../x"} {
		code, body = post(p, c.agent, list)
		require.Equal(t, http.StatusBadRequest, code, p+" "+body)
	}

	// Malformed JSON-RPC and unknown methods: JSON-RPC errors, never a
	// hang or a crash.
	for _, bad := range []string{`{"jsonrpc":"2.0","id":1,`, `[]`, `{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}`, `"x"`} {
		code, body = post(path, c.agent, bad)
		require.True(t, code == http.StatusBadRequest || strings.Contains(body, `"error"`), "%s: %d %s", bad, code, body)
	}
	// A huge request: refused whole.
	huge := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_files","arguments":{"paths":["` + strings.Repeat("a", 4<<20) + `"]}}}`
	code, _ = post(path, c.agent, huge)
	require.True(t, slices.Contains([]int{http.StatusRequestEntityTooLarge, http.StatusBadRequest}, code), "huge: %d", code)
	// The console still answers.
	code, _ = post(path, c.agent, list)
	require.Equal(t, http.StatusOK, code)
}

// TestMCPGatewayStdioBridgeZ1: a client that launches a process reaches the
// gateway through `starter mcp --url`, which relays JSON-RPC unchanged and
// takes the token from TOOLROUND_TOKEN, never from argv.
func TestMCPGatewayStdioBridgeZ1(t *testing.T) {
	e, c := newConsoleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("bridged\n"), 0o644))
	url := gatewayURL(c, e.session, "stdio")

	// Without the token in the environment it refuses to start.
	r := e.starter(ctx, "", "mcp", "--url", url)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "TOOLROUND_TOKEN")

	cmd := exec.CommandContext(ctx, starterBin, "mcp", "--url", url)
	cmd.Env = append(e.environ(), "TOOLROUND_TOKEN="+c.agent)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, stderr.String())
	defer func() { _ = cs.Close() }()
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err, stderr.String())
	require.NotEmpty(t, lt.Tools)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"paths": []string{"notes.txt"}}})
	require.NoError(t, err, stderr.String())
	require.False(t, res.IsError, textOf(res))
	require.Contains(t, textOf(res), "bridged")
	require.Contains(t, metaOf(res, "dev.toolround/workflow_id"), "/mcp-stdio/")
	require.NotContains(t, strings.Join(cmd.Args, " "), c.agent, "the token is never in argv")
}

// postRPC posts the JSON-RPC message msg to the gateway at u with token,
// as a streamable HTTP client does, with the headers hdr besides.
func postRPC(t *testing.T, ctx context.Context, u, token string, msg any, hdr map[string]string) *http.Response {
	t.Helper()
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, "POST", u, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// rpc posts one JSON-RPC request to the gateway at revision and returns
// its result or error, from a JSON or an event-stream answer.
func rpc(t *testing.T, ctx context.Context, url, token, revision, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	hdr := map[string]string{"Mcp-Method": method}
	if method != "initialize" {
		hdr["MCP-Protocol-Version"] = revision
	}
	resp := postRPC(t, ctx, url, token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, hdr)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", method, b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last string
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				last = d
			}
		}
		b = []byte(last)
	}
	var m struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	return m.Result, m.Error
}

// TestMCPGatewayTasksZ3 drives MCP tasks of revision 2025-11-25 through the
// real console and worker: the capability and taskSupport are announced; a
// task-augmented edit answers with a task at once, which is working while
// it waits for a person, gives its result through tasks/result once
// approved, and is listed; another is cancelled with tasks/cancel; on
// 2026-07-28 the tasks extension, its result inline in tasks/get; a task
// id of another session is no task.
func TestMCPGatewayTasksZ3(t *testing.T) {
	e, c := newConsoleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "t.txt"), []byte("a\n"), 0o644))
	url := gatewayURL(c, e.session, "tasks")
	const rev = "2025-11-25"

	init, _ := rpc(t, ctx, url, c.agent, rev, "initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	require.Equal(t, rev, init["protocolVersion"])
	caps := init["capabilities"].(map[string]any)
	require.Contains(t, caps, "tasks")
	lt, _ := rpc(t, ctx, url, c.agent, rev, "tools/list", map[string]any{})
	for _, tl := range lt["tools"].([]any) {
		require.Equal(t, map[string]any{"taskSupport": "optional"}, tl.(map[string]any)["execution"])
	}
	// Another revision gets no tasks.
	older, _ := rpc(t, ctx, url, c.agent, "2025-06-18", "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	require.Equal(t, "2025-06-18", older["protocolVersion"])
	require.NotContains(t, older["capabilities"].(map[string]any), "tasks")

	created, rerr := rpc(t, ctx, url, c.agent, rev, "tools/call", map[string]any{"name": "edit_file",
		"arguments": map[string]any{"path": "t.txt", "old_text": "a", "new_text": "b"}, "task": map[string]any{"ttl": 60000}})
	require.Nil(t, rerr)
	task := created["task"].(map[string]any)
	id := task["taskId"].(string)
	require.Equal(t, "working", task["status"])
	require.NotEmpty(t, task["createdAt"])

	wfID, callID, approvalID := waitingCall(t, c, e.session)
	require.Equal(t, wfID+"/"+callID, id, "the task id names the round and the call")
	got, _ := rpc(t, ctx, url, c.agent, rev, "tasks/get", map[string]any{"taskId": id})
	require.Equal(t, "working", got["status"])
	require.Contains(t, got["statusMessage"], "waiting for a person")

	r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res, rerr := rpc(t, ctx, url, c.agent, rev, "tasks/result", map[string]any{"taskId": id})
	require.Nil(t, rerr)
	require.NotEqual(t, true, res["isError"], "%v", res)
	require.Equal(t, map[string]any{"taskId": id}, res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"])
	got, _ = rpc(t, ctx, url, c.agent, rev, "tasks/get", map[string]any{"taskId": id})
	require.Equal(t, "completed", got["status"])
	b, err := os.ReadFile(filepath.Join(e.workdir, "t.txt"))
	require.NoError(t, err)
	require.Equal(t, "b\n", string(b))
	require.Eventually(t, func() bool {
		list, _ := rpc(t, ctx, url, c.agent, rev, "tasks/list", map[string]any{})
		for _, x := range list["tasks"].([]any) {
			if x.(map[string]any)["taskId"] == id {
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "tasks/list lists the task")

	// tasks/cancel.
	created, _ = rpc(t, ctx, url, c.agent, rev, "tools/call", map[string]any{"name": "edit_file",
		"arguments": map[string]any{"path": "t.txt", "old_text": "b", "new_text": "c"}, "task": map[string]any{}})
	id2 := created["task"].(map[string]any)["taskId"].(string)
	waitingCall(t, c, e.session)
	got, rerr = rpc(t, ctx, url, c.agent, rev, "tasks/cancel", map[string]any{"taskId": id2})
	require.Nil(t, rerr)
	require.Equal(t, "cancelled", got["status"])
	res, _ = rpc(t, ctx, url, c.agent, rev, "tasks/result", map[string]any{"taskId": id2})
	require.Equal(t, "cancelled", res["_meta"].(map[string]any)["dev.toolround/status"])
	b, err = os.ReadFile(filepath.Join(e.workdir, "t.txt"))
	require.NoError(t, err)
	require.Equal(t, "b\n", string(b), "the cancelled edit never ran")

	// Revision 2026-07-28: the tasks extension, declared on the request;
	// tasks/get carries the result once the call is done.
	const rev26 = "2026-07-28"
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": rev26,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	disc, _ := rpc(t, ctx, url, c.agent, rev26, "server/discover", map[string]any{"_meta": meta})
	require.Contains(t, disc["capabilities"].(map[string]any)["extensions"], "io.modelcontextprotocol/tasks", "%v", disc)
	created, rerr = rpc(t, ctx, url, c.agent, rev26, "tools/call", map[string]any{"name": "edit_file", "_meta": meta,
		"arguments": map[string]any{"path": "t.txt", "old_text": "b", "new_text": "d"}})
	require.Nil(t, rerr)
	require.Equal(t, "task", created["resultType"])
	id3 := created["taskId"].(string)
	wfID, callID, approvalID = waitingCall(t, c, e.session)
	require.Equal(t, wfID+"/"+callID, id3)
	got, _ = rpc(t, ctx, url, c.agent, rev26, "tasks/get", map[string]any{"taskId": id3, "_meta": meta})
	require.Equal(t, "working", got["status"])
	require.NotContains(t, got, "result")
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Eventually(t, func() bool {
		got, _ = rpc(t, ctx, url, c.agent, rev26, "tasks/get", map[string]any{"taskId": id3, "_meta": meta})
		return got["status"] == "completed"
	}, time.Minute, 200*time.Millisecond)
	inline := got["result"].(map[string]any)
	require.NotEqual(t, true, inline["isError"], "%v", inline)
	require.Equal(t, "ok", inline["_meta"].(map[string]any)["dev.toolround/status"])
	b, err = os.ReadFile(filepath.Join(e.workdir, "t.txt"))
	require.NoError(t, err)
	require.Equal(t, "d\n", string(b))

	// Another session's client names no task of this one.
	other := gatewayURL(c, e.session+"-x", "tasks")
	_, rerr = rpc(t, ctx, other, c.agent, rev, "tasks/get", map[string]any{"taskId": id})
	require.NotNil(t, rerr)
	_, rerr = rpc(t, ctx, url, c.agent, rev, "tasks/get", map[string]any{"taskId": "toolround/x/y/1/mcp_1_0"})
	require.NotNil(t, rerr)
}

// TestREADMEMCPGatewayLinesZ1 runs what the README shows for agents that
// speak MCP: the Python example through the real console and worker, and
// the Claude Code line's URL and header (with the console's address) from
// an MCP client; the stdio line is TestMCPGatewayStdioBridgeZ1's.
func TestREADMEMCPGatewayLinesZ1(t *testing.T) {
	e, c := newConsoleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "NOTES.md"), []byte("# notes\n"), 0o644))

	py := python(t, "mcp", "httpx2")
	cmd := exec.CommandContext(ctx, py, "../examples/python/mcp_gateway.py")
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+c.url, "CONSOLE_TOKEN="+c.agent, "SESSION="+e.session)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "tools: ")
	require.Contains(t, string(out), "NOTES.md")
	require.Contains(t, string(out), "round: toolround/"+e.session+"/mcp-py-mcp/")

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	var line string
	lines := strings.Split(string(readme), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "claude mcp add") {
			line = l + " " + lines[i+1]
		}
	}
	require.NotEmpty(t, line, "the README shows the Claude Code line")
	m := regexp.MustCompile(`--header "Authorization: Bearer \$TOKEN".*'(http://127\.0\.0\.1:8780(/api/v1/mcp\?session=[^&']+&run=[^']+))'`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	cl := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url + m[2],
		HTTPClient: &http.Client{Transport: bearer{token: c.approver, base: http.DefaultTransport}}}, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, lt.Tools)
}

// elicitingConsole is a worker and a console with
// MCP_GATEWAY_APPROVE=elicitation and three tokens: alice the approver, bot
// an agent, and carol an agent marked approve=elicitation (returned).
func elicitingConsole(t *testing.T) (*env, *consoleProc, string) {
	t.Helper()
	e := newEnv(t)
	e.startWorker()
	stamp := fmt.Sprint(time.Now().UnixNano())
	approver, agent, person := "ap-"+stamp+"-xxxxxxxx", "ag-"+stamp+"-xxxxxxxx", "pe-"+stamp+"-xxxxxxxx"
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte(approver+" alice approver\n"+agent+" bot agent\n"+person+" carol agent approve=elicitation\n"), 0o600))
	c := &consoleProc{approver: approver, agent: agent, logs: &syncBuffer{}}
	e.runConsole(c, []string{"CONSOLE_TOKENS=" + tokens, "MCP_GATEWAY_APPROVE=elicitation"})
	return e, c, person
}

// TestMCPGatewayApprovalByElicitationZ3: with MCP_GATEWAY_APPROVE=elicitation,
// the person at the client of a token marked approve=elicitation decides
// its plain approval waits through a form (an input request the SDK's
// client answers with its elicitation handler): recorded via elicitation,
// unverified, by the token's name; a decline leaves the call waiting for
// an approver; a call that always asks is never put to the client, nor is
// anything of a token without the mark.
func TestMCPGatewayApprovalByElicitationZ3(t *testing.T) {
	e, c, person := elicitingConsole(t)
	agent := c.agent
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.workdir, f), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, ".env"), []byte("KEY=1\n"), 0o644))

	var mu sync.Mutex
	var asked []string
	answer := map[string]any{"approve": true, "reason": "looks right"}
	action := "accept"
	setAction := func(a string) { mu.Lock(); action = a; mu.Unlock() }
	nAsked := func() int { mu.Lock(); defer mu.Unlock(); return len(asked) }
	connect := func(token string) *mcp.ClientSession {
		cl := mcp.NewClient(&mcp.Implementation{Name: "elicit", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, r.Params.Message)
				return &mcp.ElicitResult{Action: action, Content: answer}, nil
			}})
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   gatewayURL(c, e.session, "el"),
			HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	cs := connect(person)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "a.txt", "old_text": "x", "new_text": "y"}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	require.Equal(t, 1, nAsked())
	mu.Lock()
	require.Contains(t, asked[0], "edit_file")
	require.Contains(t, asked[0], "a.txt")
	mu.Unlock()
	b, err := os.ReadFile(filepath.Join(e.workdir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "y\n", string(b))
	var rres round.Result
	r := c.call(t, "GET", "/api/v1/rounds/"+metaOf(res, "dev.toolround/workflow_id"), c.approver, nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	r.json(t, &rres)
	appr := rres.Results[0].Approval
	require.NotNil(t, appr)
	require.Equal(t, "elicitation", appr.Via)
	require.False(t, appr.Verified)
	require.Equal(t, "carol", appr.By)
	require.Equal(t, "looks right", appr.Reason)

	// A decline leaves the call waiting for an approver.
	setAction("decline")
	got := callInBackground(ctx, cs, &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "b.txt", "old_text": "x", "new_text": "z"}})
	wfID, callID, approvalID := waitingCall(t, c, e.session)
	require.Eventually(t, func() bool { return nAsked() == 2 }, 30*time.Second, 50*time.Millisecond)
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = <-got
	require.False(t, res.IsError, textOf(res))
	require.Equal(t, 2, nAsked(), "a declined wait is not asked again")

	// A read of a key file always asks: an approver decides it, never the client.
	setAction("accept")
	got = callInBackground(ctx, cs, &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"paths": []string{".env"}}})
	wfID, callID, approvalID = waitingCall(t, c, e.session)
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": false})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	<-got
	require.Equal(t, 2, nAsked(), "a call that always asks is never put to the client")

	// A token without the mark is never asked.
	plain := connect(agent)
	got = callInBackground(ctx, plain, &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "c.txt", "old_text": "x", "new_text": "w"}})
	wfID, callID, approvalID = waitingCall(t, c, e.session)
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	<-got
	require.Equal(t, 2, nAsked())
}

// sseReader reads the JSON-RPC messages of an event stream.
type sseReader struct{ sc *bufio.Scanner }

func (s *sseReader) next(t *testing.T) map[string]any {
	t.Helper()
	var data []string
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" && len(data) > 0 {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.Join(data, "\n")), &m))
			return m
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
		}
	}
	t.Fatalf("the stream ended: %v", s.sc.Err())
	return nil
}

// TestMCPGatewayElicitationCreateZ3: on revision 2025-11-25 a client that
// declared form elicitation, of a token marked approve=elicitation, gets
// elicitation/create in its call's stream; its answer, POSTed back, to any
// console, decides the wait; an answer naming a call of another run
// decides nothing; the same token's client that declared no elicitation is
// not asked.
func TestMCPGatewayElicitationCreateZ3(t *testing.T) {
	e, c, person := elicitingConsole(t)
	agent := c.agent
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "a.txt"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "b.txt"), []byte("x\n"), 0o644))
	const rev = "2025-11-25"
	url := gatewayURL(c, e.session, "old")
	initialize := func(u, token string, caps map[string]any) {
		res, rerr := rpc(t, ctx, u, token, rev, "initialize", map[string]any{"protocolVersion": rev, "capabilities": caps,
			"clientInfo": map[string]any{"name": "t", "version": "1"}})
		require.Nil(t, rerr)
		require.Equal(t, rev, res["protocolVersion"])
	}
	post := func(u, token string, body any) *http.Response {
		return postRPC(t, ctx, u, token, body, map[string]string{"MCP-Protocol-Version": rev})
	}

	// Another run's call waits too: an answer naming it must decide nothing.
	otherURL := gatewayURL(c, e.session, "other")
	initialize(otherURL, agent, map[string]any{})
	otherDone := make(chan struct{})
	go func() {
		defer close(otherDone)
		// The SDK's server answers a waiting call's headers with its
		// result; this request ends when the test does.
		if resp := post(otherURL, agent, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "b.txt", "old_text": "x", "new_text": "o"}}}); resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}()
	otherWF, otherCall, otherApproval := waitingCall(t, c, e.session)

	initialize(url, person, map[string]any{"elicitation": map[string]any{}})
	resp := post(url, person, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "a.txt", "old_text": "x", "new_text": "y"}}})
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))
	stream := &sseReader{sc: bufio.NewScanner(resp.Body)}
	var ask map[string]any
	for ask == nil {
		if m := stream.next(t); m["method"] == "elicitation/create" {
			ask = m
		}
	}
	params := ask["params"].(map[string]any)
	require.Contains(t, params["message"], "edit_file")
	require.Contains(t, params["requestedSchema"].(map[string]any)["properties"], "approve")
	id := ask["id"].(string)

	// A forged answer naming the other run's call: refused silently.
	forged := post(url, person, map[string]any{"jsonrpc": "2.0", "id": "toolround-elicit:" + otherWF + "|" + otherCall + "|" + otherApproval,
		"result": map[string]any{"action": "accept", "content": map[string]any{"approve": true}}})
	_ = forged.Body.Close()
	require.Equal(t, http.StatusAccepted, forged.StatusCode)

	// The real answer decides this call's wait.
	answered := post(url, person, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"action": "accept",
		"content": map[string]any{"approve": true, "reason": "fine"}}})
	_ = answered.Body.Close()
	require.Equal(t, http.StatusAccepted, answered.StatusCode)
	var final map[string]any
	for final == nil {
		if m := stream.next(t); m["id"] == float64(1) {
			final = m
		}
	}
	require.Nil(t, final["error"], "%v", final)
	result := final["result"].(map[string]any)
	require.NotEqual(t, true, result["isError"], "%v", result)
	b, err := os.ReadFile(filepath.Join(e.workdir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "y\n", string(b))

	// The other run's call still waits for an approver.
	w2, c2, _ := waitingCall(t, c, e.session)
	require.Equal(t, []string{otherWF, otherCall}, []string{w2, c2})
	r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": otherWF, "call_id": otherCall, "approval_id": otherApproval, "approve": false})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	<-otherDone
	b, err = os.ReadFile(filepath.Join(e.workdir, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(b))

	// The same token's client that declared no elicitation is not asked:
	// its call's stream holds the result and nothing else.
	plainURL := gatewayURL(c, e.session, "plain")
	initialize(plainURL, person, map[string]any{})
	body := make(chan string, 1)
	go func() {
		resp := post(plainURL, person, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
			"params": map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "b.txt", "old_text": "x", "new_text": "p"}}})
		all, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		body <- string(all)
	}()
	plainWF, plainCall, plainApproval := waitingCall(t, c, e.session)
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": plainWF, "call_id": plainCall, "approval_id": plainApproval, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	got := <-body
	require.NotContains(t, got, "elicitation/create")
	require.Contains(t, got, `"id":9`)
}

// TestMCPGatewayRunStateHoldsZ2: the gateway run's state carries across
// its calls, each its own round: an identical read is served from the
// run's dedupe map, a rule remembered on one call approves a later one,
// and WORKER_LIMITS counts every call of the run (the usage the gateway
// signs for each round, T15), so the call past the limit waits.
func TestMCPGatewayRunStateHoldsZ2(t *testing.T) {
	e, c := newConsoleEnv(t, `WORKER_LIMITS={"max_calls": 3}`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("n\n"), 0o644))
	cs := agentGatewayClient(t, ctx, c, e.session, "state")
	resultOf := func(res *mcp.CallToolResult) round.CallResult {
		t.Helper()
		var rr round.Result
		r := c.call(t, "GET", "/api/v1/rounds/"+metaOf(res, "dev.toolround/workflow_id"), c.approver, nil)
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		r.json(t, &rr)
		for _, x := range rr.Results {
			if x.CallID == metaOf(res, "dev.toolround/call_id") {
				return x
			}
		}
		t.Fatalf("no result for %s", metaOf(res, "dev.toolround/call_id"))
		return round.CallResult{}
	}
	callAsync := func(name string, args map[string]any) <-chan *mcp.CallToolResult {
		return callInBackground(ctx, cs, &mcp.CallToolParams{Name: name, Arguments: args})
	}

	read := map[string]any{"paths": []string{"notes.txt"}}
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_files", Arguments: read})
	require.NoError(t, err)
	again, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_files", Arguments: read})
	require.NoError(t, err)
	require.NotEqual(t, metaOf(first, "dev.toolround/workflow_id"), metaOf(again, "dev.toolround/workflow_id"), "two rounds")
	require.NotNil(t, resultOf(again).Repeat, "the second read is served from the run's dedupe map")

	got := callAsync("run_command", map[string]any{"command": "echo hi"})
	wfID, callID, approvalID := waitingCall(t, c, e.session)
	r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID,
		"approval_id": approvalID, "approve": true, "remember": true, "pattern": "echo *"})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res := <-got
	require.False(t, res.IsError, textOf(res))
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo there"}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	require.Equal(t, round.DecisionRule, resultOf(res).Approval.Decision, "the rule remembered on an earlier call approves it")

	// Three calls ran (the repeat ran nothing): the fourth is past
	// WORKER_LIMITS' max_calls and waits for a person.
	callAsync("calculate", map[string]any{"expression": "6*7"})
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/inbox?session="+e.session, c.approver, nil)
		var inbox []struct {
			Pending []map[string]any `json:"pending"`
		}
		r.json(t, &inbox)
		return len(inbox) == 1 && len(inbox[0].Pending) == 1 && inbox[0].Pending[0]["kind"] == round.KindLimit
	}, time.Minute, 100*time.Millisecond, "the call past the run's limit waits as a limit")
	cancel() // the client gives up waiting; the call stays in the inbox
}
