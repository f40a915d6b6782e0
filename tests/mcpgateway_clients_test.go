package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// scriptClient is an MCP client of another SDK that a test drives over the
// process's stdin and stdout, one JSON object a line (the commands of
// tests/mcpclients/gateway_client.py, which the TypeScript client's
// tests/mcpclients/ts/gateway_client.mjs takes too).
type scriptClient struct {
	t      *testing.T
	in     io.WriteCloser
	lines  chan map[string]any
	early  map[string]map[string]any
	next   int
	exited chan struct{} // closed when the process has exited, with exit
	exit   error
	stderr *syncBuffer
}

// startScriptClient starts cmd with the gateway's endpoint and token.
func startScriptClient(t *testing.T, cmd *exec.Cmd, endpoint, token string) *scriptClient {
	t.Helper()
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+endpoint, "GATEWAY_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
	s := &scriptClient{t: t, lines: make(chan map[string]any, 64), early: map[string]map[string]any{},
		exited: make(chan struct{}), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s.in = in
	require.NoError(t, cmd.Start())
	var read sync.WaitGroup
	read.Add(1)
	go func() {
		defer read.Done()
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"tag": "", "error": "not JSON: " + sc.Text()}
			}
			s.lines <- m
		}
	}()
	go func() { read.Wait(); s.exit = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = in.Close()
		go func() { // answers nobody awaits any more
			for range s.lines {
			}
		}()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("%s (exit: %v) stderr:\n%s", filepath.Base(cmd.Path), s.exit, s.stderr.String())
		}
	})
	return s
}

// send sends a command and returns its tag.
func (s *scriptClient) send(cmd map[string]any) string {
	s.t.Helper()
	s.next++
	tag := fmt.Sprintf("t%d", s.next)
	cmd["tag"] = tag
	b, err := json.Marshal(cmd)
	require.NoError(s.t, err)
	_, err = s.in.Write(append(b, '\n'))
	require.NoError(s.t, err, "the client exited:\n%s", s.stderr.String())
	return tag
}

// await is the answer to the command tagged tag.
func (s *scriptClient) await(tag string) map[string]any {
	s.t.Helper()
	if m, ok := s.early[tag]; ok {
		delete(s.early, tag)
		return m
	}
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case m, ok := <-s.lines:
			require.True(s.t, ok, "the client exited before it answered %s:\n%s", tag, s.stderr.String())
			got, _ := m["tag"].(string)
			if got == tag {
				return m
			}
			s.early[got] = m
		case <-timeout:
			s.t.Fatalf("no answer to %s within 3 minutes:\n%s", tag, s.stderr.String())
		}
	}
}

// do sends a command and requires an answer without an error.
func (s *scriptClient) do(cmd map[string]any) map[string]any {
	s.t.Helper()
	m := s.await(s.send(cmd))
	require.Nil(s.t, m["error"], "%v: %v", cmd["op"], m["error"])
	return m
}

// wireResult is a CallToolResult as it travels.
type wireResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Meta map[string]any `json:"_meta"`
}

func (r wireResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (r wireResult) meta(k string) string {
	v, _ := r.Meta[k].(string)
	return v
}

// result is a call's answer as a result; a call that failed fails the test.
func (s *scriptClient) result(tag string) wireResult {
	s.t.Helper()
	m := s.await(tag)
	require.Nil(s.t, m["error"], "call %s: %v", tag, m["error"])
	b, err := json.Marshal(m["result"])
	require.NoError(s.t, err)
	var r wireResult
	require.NoError(s.t, json.Unmarshal(b, &r), string(b))
	return r
}

// attachedCalls counts the calls that attached to an open identical call
// of the gateway run (the update "call" answered with attached: true).
func attachedCalls(t *testing.T, tc tclient.Client, session, run string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	it := tc.GetWorkflowHistory(ctx, names.GatewayWorkflowID(session, run), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		done := ev.GetWorkflowExecutionUpdateCompletedEventAttributes()
		if done == nil || done.GetOutcome().GetSuccess() == nil {
			continue
		}
		var tk round.GatewayTicket
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(done.GetOutcome().GetSuccess(), &tk))
		if tk.Attached {
			n++
		}
	}
	return n
}

// gatewayClientScenario is what each MCP SDK's client does through the
// real console and worker (Z5): it lists the tools, with this system's
// annotations and without find_tools, run_tool or interactive tools; a
// read-only call runs at once; an edit waits and, approved in the
// console, runs; an edit whose client goes away while it waits and the
// worker is killed is sent again by the client reconnected (a new MCP
// session), attaches to the waiting call and gets its one result, and the
// edit ran once.
func gatewayClientScenario(t *testing.T, start func(t *testing.T, endpoint, token string) *scriptClient) {
	e := newEnv(t)
	w := e.startWorker()
	c := e.startConsole()
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(), Logger: testenv.QuietLogger()})
	require.NoError(t, err)
	defer tc.Close()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("one\ntwo\n"), 0o644))
	const run = "sdk"
	s := start(t, gatewayURL(c, e.session, run), c.agent)

	hello := s.do(map[string]any{"op": "connect", "client": "a"})
	t.Logf("connected at protocol revision %v", hello["protocol"])

	// tools/list.
	var tools []struct {
		Name        string `json:"name"`
		Annotations struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
			Idempotent  *bool `json:"idempotentHint"`
			OpenWorld   *bool `json:"openWorldHint"`
		} `json:"annotations"`
	}
	b, err := json.Marshal(s.do(map[string]any{"op": "list", "client": "a"})["tools"])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &tools), string(b))
	byName := map[string]int{}
	for i, tl := range tools {
		byName[tl.Name] = i
	}
	for _, want := range []string{"read_files", "edit_file", "run_command"} {
		require.Contains(t, byName, want)
	}
	for _, never := range []string{"find_tools", "run_tool", "ask_user", "subagents", "background_subagents"} {
		require.NotContains(t, byName, never)
	}
	is := func(p *bool) bool { return p != nil && *p }
	isNot := func(p *bool) bool { return p != nil && !*p }
	rf, ef := tools[byName["read_files"]].Annotations, tools[byName["edit_file"]].Annotations
	require.True(t, is(rf.ReadOnly) && is(rf.Idempotent) && isNot(rf.Destructive) && isNot(rf.OpenWorld), "read_files: %+v", rf)
	require.True(t, !is(ef.ReadOnly) && !is(ef.Idempotent) && is(ef.Destructive), "edit_file: %+v", ef)

	// A read-only call runs at once.
	res := s.result(s.send(map[string]any{"op": "call", "client": "a", "name": "read_files",
		"arguments": map[string]any{"paths": []string{"notes.txt"}}}))
	require.False(t, res.IsError, res.text())
	require.Contains(t, res.text(), "two")
	require.Equal(t, "ok", res.meta("dev.toolround/status"))
	require.True(t, strings.HasPrefix(res.meta("dev.toolround/workflow_id"), "toolround/"+e.session+"/mcp-"+run+"/"), res.meta("dev.toolround/workflow_id"))

	// An edit waits for a person; approved in the console while the
	// client waits, it runs.
	tag := s.send(map[string]any{"op": "call", "client": "a", "name": "edit_file",
		"arguments": map[string]any{"path": "notes.txt", "old_text": "two", "new_text": "2"}})
	wfID, callID, approvalID := waitingCall(t, c, e.session)
	r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = s.result(tag)
	require.False(t, res.IsError, res.text())
	require.Equal(t, wfID, res.meta("dev.toolround/workflow_id"))
	require.Equal(t, callID, res.meta("dev.toolround/call_id"))
	got, err := os.ReadFile(filepath.Join(e.workdir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "one\n2\n", string(got))

	// The client goes away while its edit waits and the worker is killed;
	// a new worker, and the client reconnected with a new session sends
	// the same call: it attaches to the waiting one, gets its one result,
	// and the edit ran once.
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "once.txt"), []byte("x\n"), 0o644))
	edit := map[string]any{"path": "once.txt", "old_text": "x", "new_text": "xy"}
	lost := s.send(map[string]any{"op": "call", "client": "a", "name": "edit_file", "arguments": edit})
	wfID, callID, approvalID = waitingCall(t, c, e.session)
	w.kill(t)
	s.do(map[string]any{"op": "drop", "client": "a"})
	require.Equal(t, "cancelled", s.await(lost)["error"], "the call of the client that went away")
	e.startWorker()
	before := attachedCalls(t, tc, e.session, run)
	s.do(map[string]any{"op": "connect", "client": "b"})
	again := s.send(map[string]any{"op": "call", "client": "b", "name": "edit_file", "arguments": edit})
	require.Eventually(t, func() bool { return attachedCalls(t, tc, e.session, run) > before }, time.Minute, 100*time.Millisecond,
		"the reconnected client's call did not attach to the waiting one")
	w2, c2, a2 := waitingCall(t, c, e.session)
	require.Equal(t, []string{wfID, callID, approvalID}, []string{w2, c2, a2}, "still the one waiting call")
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": callID, "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = s.result(again)
	require.False(t, res.IsError, res.text())
	require.Equal(t, wfID, res.meta("dev.toolround/workflow_id"))
	require.Equal(t, callID, res.meta("dev.toolround/call_id"))
	got, err = os.ReadFile(filepath.Join(e.workdir, "once.txt"))
	require.NoError(t, err)
	require.Equal(t, "xy\n", string(got), "the edit ran once")

	_, err = s.in.Write([]byte(`{"op":"quit"}` + "\n"))
	require.NoError(t, err)
	select {
	case <-s.exited:
		require.NoError(t, s.exit, "the client's exit:\n%s", s.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the client did not exit on quit:\n%s", s.stderr.String())
	}
}

// TestMCPGatewayPythonClientZ5 runs gatewayClientScenario with the
// official MCP Python SDK's client (mcp from PyPI; scripts/lib.sh's
// ensure_python_tools installs it into TOOLROUND_PYTHON's virtualenv).
func TestMCPGatewayPythonClientZ5(t *testing.T) {
	py := python(t, "mcp.client.streamable_http", "httpx2", "anyio")
	script, err := filepath.Abs(filepath.Join("mcpclients", "gateway_client.py"))
	require.NoError(t, err)
	gatewayClientScenario(t, func(t *testing.T, endpoint, token string) *scriptClient {
		return startScriptClient(t, exec.Command(py, script), endpoint, token)
	})
}

// mcpTypeScriptSDK is the folder of the TypeScript SDK's test client with
// its dependencies installed (tests/mcpclients/ts/package-lock.json: `npm
// ci`, by scripts/lib.sh's ensure_node_tools or here when they are
// missing), and the node that runs it (TOOLROUND_NODE, else node from
// PATH).
func mcpTypeScriptSDK(t *testing.T) (node, dir string) {
	t.Helper()
	node = nodeBin(t)
	dir, err := filepath.Abs(filepath.Join("mcpclients", "ts"))
	require.NoError(t, err)
	installed := func() bool {
		_, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
		return err == nil
	}
	if !installed() {
		if out, err := runNPM(t, dir, "tests/mcpclients/ts lacks the MCP TypeScript SDK", "ci", "--no-audit", "--no-fund", "--loglevel=error"); err != nil || !installed() {
			testenv.Unavailable(t, "npm ci in tests/mcpclients/ts failed: %v\n%s", err, out)
		}
	}
	return node, dir
}

// TestMCPGatewayTypeScriptClientZ5 runs gatewayClientScenario with the
// official MCP TypeScript SDK's client (@modelcontextprotocol/sdk from
// npm, its StreamableHTTPClientTransport with the token in requestInit's
// headers).
func TestMCPGatewayTypeScriptClientZ5(t *testing.T) {
	node, dir := mcpTypeScriptSDK(t)
	gatewayClientScenario(t, func(t *testing.T, endpoint, token string) *scriptClient {
		cmd := exec.Command(node, "gateway_client.mjs")
		cmd.Dir = dir
		return startScriptClient(t, cmd, endpoint, token)
	})
}
