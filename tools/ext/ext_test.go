package ext

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

const goodFile = `{"tools": [
  {"name": "script_echo", "description": "Echo the arguments.",
   "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "what to echo"}}},
   "command": ["sh", "-c", "cat"], "read_only": true, "concurrent": true, "timeout_seconds": 5,
   "env": {"GREETING": "hi"}},
  {"name": "ext_ticket", "description": "Open a ticket.",
   "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
   "url": "https://tickets.example.test/api", "headers": {"Authorization": "Bearer x"},
   "side_effect": "idempotent"},
  {"name": "script_deploy", "description": "Deploy.", "parameters": {"type": "object"},
   "command": ["./deploy.sh"]}
]}`

func TestParse(t *testing.T) {
	cfg, err := Parse([]byte(goodFile))
	require.NoError(t, err)
	require.Len(t, cfg.Tools, 3)

	echo := cfg.Tools[0]
	require.Equal(t, "script_echo", echo.Name)
	require.Equal(t, []string{"sh", "-c", "cat"}, echo.Command)
	require.True(t, echo.Concurrent)
	require.Equal(t, tools.ReadOnly, echo.effect())
	require.Equal(t, 5.0, echo.TimeoutSeconds)
	require.Equal(t, map[string]string{"GREETING": "hi"}, echo.Env)

	ticket := cfg.Tools[1]
	require.Equal(t, "https://tickets.example.test/api", ticket.URL)
	require.Equal(t, tools.Idempotent, ticket.effect())
	require.False(t, ticket.Concurrent)

	require.Equal(t, tools.AtMostOnce, cfg.Tools[2].effect())

	path := filepath.Join(t.TempDir(), "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(goodFile), 0o600))
	loaded, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(path), loaded.Dir, "Load keeps the file's folder")
	loaded.Dir = ""
	require.Equal(t, cfg, loaded)

	_, err = Load(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorContains(t, err, "ext: tools config")
}

func TestParseErrors(t *testing.T) {
	const params = `"parameters": {"type": "object"}`
	entry := func(fields string) string { return `{"tools": [` + fields + `]}` }
	script := func(name, more string) string {
		return entry(`{"name": "` + name + `", "description": "d", ` + params + `, "command": ["true"]` + more + `}`)
	}
	tests := []struct{ name, file, want string }{
		{"not json", `{"tools": [`, `want {"tools": [...]}`},
		{"unknown top-level field", `{"tools": [], "tool": []}`, `unknown field "tool"`},
		{"no tools", `{}`, `no "tools" array`},
		{"missing name", entry(`{"description": "d", ` + params + `, "command": ["true"]}`), `entry 1: name: missing`},
		{"bad prefix", script("run_x", ""), `entry 1 (run_x): name: "run_x" must start with "script_" (a command) or "ext_" (an HTTP endpoint)`},
		{"prefix only", script("script_", ""), `name: "script_" needs something after the prefix`},
		{"bad characters", script("script_a b", ""), `name: "script_a b" must be at most 64 letters`},
		{"too long", script("script_"+strings.Repeat("x", 60), ""), `must be at most 64`},
		{"missing description", entry(`{"name": "script_x", ` + params + `, "command": ["true"]}`), `entry 1 (script_x): description: missing`},
		{"missing parameters", entry(`{"name": "script_x", "description": "d", "command": ["true"]}`), `entry 1 (script_x): parameters: missing`},
		{"parameters do not compile", entry(`{"name": "script_x", "description": "d", "parameters": {"type": "object", "properties": {"a": {"type": "nope"}}}, "command": ["true"]}`),
			`entry 1 (script_x): parameters: schema does not compile`},
		{"parameters not an object schema", entry(`{"name": "script_x", "description": "d", "parameters": {"type": "array"}, "command": ["true"]}`),
			`entry 1 (script_x): parameters: schema type is array, want object`},
		{"unknown side_effect", script("script_x", `, "side_effect": "harmless"`), `entry 1 (script_x): side_effect: "harmless" is unknown`},
		{"read_only contradiction", script("script_x", `, "read_only": true, "side_effect": "at_most_once"`), `side_effect: "at_most_once" contradicts read_only`},
		{"negative timeout", script("script_x", `, "timeout_seconds": -1`), `timeout_seconds: must not be negative`},
		{"timeout in ms", script("script_x", `, "timeout_seconds": 3600000`), `timeout_seconds: 3.6e+06 is more than a day`},
		{"unknown field", script("script_x", `, "concurent": true`), `entry 1 (script_x): json: unknown field "concurent"`},
		{"wrong type", script("script_x", `, "concurrent": "yes"`), `entry 1 (script_x): json: cannot unmarshal string`},
		{"script with url", script("script_x", `, "url": "http://h/"`), `url, headers: a script_ tool runs a command`},
		{"script without command", entry(`{"name": "script_x", "description": "d", ` + params + `}`), `entry 1 (script_x): command: missing`},
		{"script with empty argv[0]", entry(`{"name": "script_x", "description": "d", ` + params + `, "command": [""]}`), `command: missing`},
		{"script env unset", script("script_x", `, "env": {"K": "${EXT_TEST_SURELY_UNSET}"}`), `env: K: ${EXT_TEST_SURELY_UNSET} is not set`},
		{"ext with command", entry(`{"name": "ext_x", "description": "d", ` + params + `, "url": "http://h/", "command": ["true"]}`), `command, env: an ext_ tool calls a URL`},
		{"ext without url", entry(`{"name": "ext_x", "description": "d", ` + params + `}`), `entry 1 (ext_x): url: missing`},
		{"ext bad url", entry(`{"name": "ext_x", "description": "d", ` + params + `, "url": "file:///etc/passwd"}`), `url: "file:///etc/passwd" is not an http or https URL`},
		{"ext header unset", entry(`{"name": "ext_x", "description": "d", ` + params + `, "url": "http://h/", "headers": {"A": "Bearer ${EXT_TEST_SURELY_UNSET}"}}`),
			`headers: A: ${EXT_TEST_SURELY_UNSET} is not set`},
		{"duplicate", `{"tools": [` + strings.Repeat(`{"name": "script_x", "description": "d", `+params+`, "command": ["true"]},`, 2) + `{"name": "script_y", "description": "d", ` + params + `, "command": ["true"]}]}`,
			`entry 2 (script_x): name: "script_x" is already used by entry 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.file))
			require.ErrorContains(t, err, tt.want)
		})
	}

	// Every bad entry is reported, not only the first.
	_, err := Parse([]byte(`{"tools": [
		{"name": "x", "description": "d", ` + params + `},
		{"name": "script_ok", "description": "d", ` + params + `, "command": ["true"]},
		{"name": "ext_y", "description": "d", ` + params + `}]}`))
	require.ErrorContains(t, err, "entry 1 (x): name")
	require.ErrorContains(t, err, "entry 3 (ext_y): url: missing")
	require.NotContains(t, err.Error(), "entry 2")
}

func register(t *testing.T, cfg Config, workdir string) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	require.NoError(t, Register(reg, cfg, workdir))
	return reg
}

func scriptTool(name, shell string, more func(*ToolConfig)) ToolConfig {
	tc := ToolConfig{
		Name:        name,
		Description: "test script",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Command:     []string{"sh", "-c", shell},
	}
	if more != nil {
		more(&tc)
	}
	return tc
}

func run(t *testing.T, reg *tools.Registry, name, args string) (tools.Result, error) {
	t.Helper()
	return runCtx(context.Background(), t, reg, name, args)
}

func runCtx(ctx context.Context, t *testing.T, reg *tools.Registry, name, args string) (tools.Result, error) {
	t.Helper()
	def, ok := reg.Lookup(name)
	require.True(t, ok, "%s is not registered", name)
	return def.Handler(ctx, tools.Request{CallID: "call_7", OperationID: "wf/run/call_7", Args: json.RawMessage(args)})
}

func TestRegisterDefinitions(t *testing.T) {
	cfg, err := Parse([]byte(goodFile))
	require.NoError(t, err)
	cfg.Timeout = 42 * time.Second
	reg := register(t, cfg, t.TempDir())

	tests := []struct {
		name       string
		source     tools.Source
		concurrent bool
		effect     tools.SideEffect
		timeout    time.Duration
		volatile   bool
	}{
		{"script_echo", tools.SourceScript, true, tools.ReadOnly, 5 * time.Second, true},
		{"ext_ticket", tools.SourceExt, false, tools.Idempotent, 42 * time.Second, false},
		{"script_deploy", tools.SourceScript, false, tools.AtMostOnce, 42 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, ok := reg.Lookup(tt.name)
			require.True(t, ok)
			require.Equal(t, tt.source, def.Source)
			require.Equal(t, tt.concurrent, def.Concurrent, "concurrent only when the entry declares it (C2)")
			require.Equal(t, tt.effect, def.SideEffect)
			require.Equal(t, tt.timeout, def.Timeout)
			require.Equal(t, tt.volatile, def.Volatile)
		})
	}
	def, _ := reg.Lookup("ext_ticket")
	require.JSONEq(t, `{"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}`, string(def.Parameters))
	require.Equal(t, "Open a ticket.", def.Description)

	// Defaults when the Config sets none.
	reg = register(t, Config{Tools: []ToolConfig{scriptTool("script_d", "true", nil)}}, t.TempDir())
	def, _ = reg.Lookup("script_d")
	require.Equal(t, DefaultTimeout, def.Timeout)
	require.False(t, def.Concurrent)
}

func TestRegisterErrors(t *testing.T) {
	reg := tools.NewRegistry()
	err := Register(reg, Config{Tools: []ToolConfig{
		scriptTool("script_a", "true", nil),
		{Name: "ext_b", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), URL: "http://127.0.0.1:1/"},
		{Name: "bad", Description: "d"},
	}}, "")
	require.ErrorContains(t, err, `ext: tool "script_a": TOOLS_WORKDIR is empty`)
	require.ErrorContains(t, err, `ext: tool "bad": name: "bad" must start with`)
	require.Equal(t, []string{"ext_b"}, reg.Names(), "the valid tools are still registered")

	err = Register(reg, Config{Tools: []ToolConfig{scriptTool("script_x", "true", nil), scriptTool("script_x", "true", nil)}}, t.TempDir())
	require.ErrorContains(t, err, "already registered")
}

func TestScriptRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EXT_TEST_SECRET", "from-worker")
	reg := register(t, Config{MaxOutputBytes: 200, Tools: []ToolConfig{
		scriptTool("script_echo", `printf 'stdin=%s\n' "$(cat)"; printf 'env=%s\n' "$TOOL_ARGS"; printf 'name=%s call=%s op=%s greeting=%s\n' "$TOOL_NAME" "$TOOL_CALL_ID" "$TOOLROUND_OPERATION_ID" "$GREETING"; pwd`,
			func(tc *ToolConfig) {
				tc.ReadOnly = true
				tc.Env = map[string]string{"GREETING": "hi ${EXT_TEST_SECRET}"}
			}),
		scriptTool("script_write", `echo done > out.txt; echo written; echo note >&2`, nil),
		scriptTool("script_fail", `echo partial; echo "bad input: $(cat)" >&2; exit 3`, nil),
		scriptTool("script_quiet_fail", `exit 1`, nil),
		scriptTool("script_loud", `head -c 1000 /dev/zero | tr '\0' a`, nil),
		scriptTool("script_bigargs", `wc -c; printf 'env=%s' "${#TOOL_ARGS}"`, nil),
		{Name: "script_missing", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Command: []string{filepath.Join(dir, "nope")}},
	}}, dir)

	res, err := run(t, reg, "script_echo", `{"text": "hello"}`)
	require.NoError(t, err)
	require.Equal(t, "stdin={\"text\": \"hello\"}\nenv={\"text\": \"hello\"}\nname=script_echo call=call_7 op=wf/run/call_7 greeting=hi from-worker\n"+dir+"\n", res.Content)
	require.Empty(t, res.Touched, "a read-only script touches nothing")

	res, err = run(t, reg, "script_echo", ``)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Content, "stdin={}\nenv={}\n"), res.Content)

	res, err = run(t, reg, "script_write", `{}`)
	require.NoError(t, err)
	require.Equal(t, "written\n\n[stderr]\nnote\n", res.Content)
	require.Equal(t, []string{"."}, res.Touched, "a script with side effects may have changed any file")
	written, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "done\n", string(written))

	_, err = run(t, reg, "script_fail", `{"n":1}`)
	require.EqualError(t, err, `exit status 3: bad input: {"n":1}`)
	require.False(t, tools.IsTransient(err))

	_, err = run(t, reg, "script_quiet_fail", `{}`)
	require.EqualError(t, err, `exit status 1`)

	_, err = run(t, reg, "script_missing", `{}`)
	require.ErrorContains(t, err, `start "`+filepath.Join(dir, "nope")+`"`)

	res, err = run(t, reg, "script_loud", `{}`)
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("a", 200)+"\n[output truncated: 800 more bytes]", res.Content)

	big := `{"blob":"` + strings.Repeat("x", 100<<10) + `"}`
	res, err = run(t, reg, "script_bigargs", big)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(len(big))+"\nenv=0", res.Content, "large arguments arrive on stdin only")
}

// alive reports whether pid runs; a zombie that nobody reaped is dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return !(i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z')
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return pid
}

// spawner starts a background sleep, records its pid, then waits.
const spawner = `sleep 60 & echo $! > child.pid; wait`

func TestScriptTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	reg := register(t, Config{Tools: []ToolConfig{
		scriptTool("script_hang", spawner, func(tc *ToolConfig) { tc.TimeoutSeconds = 0.5 }),
	}}, dir)
	start := time.Now()
	_, err := run(t, reg, "script_hang", `{}`)
	require.EqualError(t, err, "timed out after 500ms; its process group was killed")
	require.Less(t, time.Since(start), pipeDrain, "the call ends when the group is killed")
	pid := readPid(t, filepath.Join(dir, "child.pid"))
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "child %d survived", pid)
}

func TestScriptCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	reg := register(t, Config{Tools: []ToolConfig{scriptTool("script_hang", spawner, nil)}}, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := runCtx(ctx, t, reg, "script_hang", `{}`)
		done <- err
	}()
	pid := readPid(t, filepath.Join(dir, "child.pid"))
	require.True(t, alive(pid))
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, "cancelled; its process group was killed")
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end after cancellation")
	}
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "child %d survived", pid)
}

func TestScriptLeavesNoHelperBehind(t *testing.T) {
	dir := t.TempDir()
	reg := register(t, Config{Tools: []ToolConfig{
		scriptTool("script_bg", `sleep 60 & echo $! > child.pid; echo started`, nil),
	}}, dir)
	start := time.Now()
	res, err := run(t, reg, "script_bg", `{}`)
	require.NoError(t, err)
	require.Equal(t, "started\n", res.Content)
	require.Less(t, time.Since(start), pipeDrain, "a helper holding stdout does not delay the result")
	pid := readPid(t, filepath.Join(dir, "child.pid"))
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "child %d survived", pid)
}

// TestScriptLeavesNoSetsidHelperBehind (T8): without a sandbox too, a
// process a script starts in a session of its own (setsid), which leaves
// the script's process group, ends with the call: when the script exits,
// and at its timeout.
func TestScriptLeavesNoSetsidHelperBehind(t *testing.T) {
	dir := t.TempDir()
	const leave = `setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > child.pid; `
	reg := register(t, Config{Tools: []ToolConfig{
		scriptTool("script_bg", leave+`while [ "$(cut -d' ' -f6 /proc/$(cat child.pid)/stat)" != "$(cat child.pid)" ]; do :; done; echo started`, nil),
		scriptTool("script_hang", leave+`sleep 60`, func(tc *ToolConfig) { tc.TimeoutSeconds = 1 }),
	}}, dir)
	res, err := run(t, reg, "script_bg", `{}`)
	require.NoError(t, err)
	require.Equal(t, "started\n", res.Content)
	pid := readPid(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "a setsid helper %d survived the call", pid)

	require.NoError(t, os.Remove(filepath.Join(dir, "child.pid")))
	_, err = run(t, reg, "script_hang", `{}`)
	require.ErrorContains(t, err, "timed out")
	pid = readPid(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "a setsid helper %d survived the timeout", pid)
}

func TestExtTool(t *testing.T) {
	t.Setenv("EXT_TEST_TOKEN", "tok")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "want a JSON POST", http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "auth=%s tool=%s call=%s key=%s body=%s", r.Header.Get("Authorization"), r.Header.Get("X-Tool-Name"), r.Header.Get("X-Tool-Call-Id"), r.Header.Get("Idempotency-Key"), body)
		case "/created":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id":7}`)
		case "/boom":
			http.Error(w, "database is down", http.StatusInternalServerError)
		case "/missing":
			http.Error(w, "no such ticket", http.StatusNotFound)
		case "/slow":
			<-r.Context().Done()
		}
	}))
	t.Cleanup(ts.Close)

	ext := func(name, path string, more func(*ToolConfig)) ToolConfig {
		tc := ToolConfig{Name: name, Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), URL: ts.URL + path}
		if more != nil {
			more(&tc)
		}
		return tc
	}
	readOnly := func(tc *ToolConfig) { tc.ReadOnly = true }
	reg := register(t, Config{Tools: []ToolConfig{
		ext("ext_echo", "/echo?key=secret", func(tc *ToolConfig) {
			tc.Headers = map[string]string{"Authorization": "Bearer ${EXT_TEST_TOKEN}"}
		}),
		ext("ext_created", "/created", nil),
		ext("ext_boom", "/boom?key=secret", nil),
		ext("ext_boom_ro", "/boom", readOnly),
		ext("ext_missing", "/missing", readOnly),
		ext("ext_slow", "/slow", func(tc *ToolConfig) { tc.TimeoutSeconds = 0.2; tc.ReadOnly = true }),
	}}, "")

	res, err := run(t, reg, "ext_echo", `{"title":"x"}`)
	require.NoError(t, err)
	require.Equal(t, `auth=Bearer tok tool=ext_echo call=call_7 key=wf/run/call_7 body={"title":"x"}`, res.Content)

	res, err = run(t, reg, "ext_created", ``)
	require.NoError(t, err)
	require.Equal(t, `{"id":7}`, res.Content)

	tests := []struct {
		tool, want string
		transient  bool
	}{
		{"ext_boom", "POST " + ts.URL + "/boom: HTTP 500 Internal Server Error: database is down", false},
		{"ext_boom_ro", "POST " + ts.URL + "/boom: HTTP 500 Internal Server Error: database is down", true},
		{"ext_missing", "POST " + ts.URL + "/missing: HTTP 404 Not Found: no such ticket", false},
		{"ext_slow", "POST " + ts.URL + "/slow: no answer within 200ms", true},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			_, err := run(t, reg, tt.tool, `{}`)
			require.EqualError(t, err, tt.want)
			require.NotContains(t, err.Error(), "secret", "the query string stays out of messages")
			require.Equal(t, tt.transient, tools.IsTransient(err))
		})
	}
}

func TestExtToolUsesTheNetworkPolicy(t *testing.T) {
	var hits int
	ts := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	t.Cleanup(ts.Close)
	reg := register(t, Config{
		Network: &netguard.Policy{DenyPrivate: true},
		Tools:   []ToolConfig{{Name: "ext_local", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), URL: ts.URL, ReadOnly: true}},
	}, "")
	_, err := run(t, reg, "ext_local", `{}`)
	require.ErrorContains(t, err, "network policy denies private addresses")
	require.False(t, tools.IsTransient(err))
	require.Zero(t, hits)
}

func TestCappedOutput(t *testing.T) {
	c := text.NewWriter(4)
	_, _ = c.Write([]byte("ab"))
	_, _ = c.Write([]byte("céd"))
	require.Equal(t, "abc\n[output truncated: 3 more bytes]", c.String(), "a character cut at the limit is dropped whole")
	require.Equal(t, int64(6), c.Total())
	// Output that is not UTF-8 before the limit keeps every byte it was
	// given: the old buffer dropped up to four good characters from its end.
	c = text.NewWriter(8)
	_, _ = c.Write([]byte("\xffabcdefgh"))
	require.Equal(t, "\xffabcdefg\n[output truncated: 1 more bytes]", c.String())
}

// TestScriptReportsForTestTool (G4): run for a test_tool call, a script
// reports its exit code, stdout and stderr, also when it fails; a timeout
// stays a failure.
func TestScriptReportsForTestTool(t *testing.T) {
	dir := t.TempDir()
	reg := register(t, Config{Tools: []ToolConfig{
		scriptTool("script_fail", `echo partial; echo "bad input: $(cat)" >&2; exit 3`, nil),
		scriptTool("script_ok", `printf 'fine'`, func(tc *ToolConfig) { tc.ReadOnly = true }),
		scriptTool("script_slow", `sleep 30`, func(tc *ToolConfig) { tc.TimeoutSeconds = 1 }),
	}}, dir)
	test := func(name, args string) (tools.Result, error) {
		def, ok := reg.Lookup(name)
		require.True(t, ok)
		return def.Handler(context.Background(), tools.Request{Tool: name, CallID: "c", OperationID: "wf/run/c", Args: json.RawMessage(args), Test: true})
	}
	res, err := test("script_fail", `{"n":1}`)
	require.NoError(t, err, "a failing script is a report, not a failure")
	require.Equal(t, "exit code: 3\n[stdout]\npartial\n[stderr]\nbad input: {\"n\":1}\n", res.Content)
	require.Equal(t, []string{"."}, res.Touched, "it ran as the script runs: it may have changed files")

	res, err = test("script_ok", `{}`)
	require.NoError(t, err)
	require.Equal(t, "exit code: 0\n[stdout]\nfine\n[stderr]\n", res.Content)
	require.Empty(t, res.Touched)

	_, err = test("script_slow", `{}`)
	require.ErrorContains(t, err, "timed out after 1s")
}
