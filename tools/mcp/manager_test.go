package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// buildTestServer compiles the stdio test server into a temporary folder.
func buildTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	out, err := exec.Command("go", "build", "-o", bin, "./internal/testserver").CombinedOutput()
	require.NoError(t, err, "go build testserver: %s", out)
	return bin
}

func connect(t *testing.T, cfg Config) (*Manager, *tools.Registry) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := Connect(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	reg := tools.NewRegistry()
	require.NoError(t, m.Register(reg))
	return m, reg
}

func call(t *testing.T, reg *tools.Registry, name, args string) (string, error) {
	t.Helper()
	def, ok := reg.Lookup(name)
	require.True(t, ok, "tool %s is not registered; have %v", name, reg.Names())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := def.Handler(ctx, tools.Request{CallID: "c1", Args: json.RawMessage(args)})
	return res.Content, err
}

func status(m *Manager, name string) ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

func TestStdioServer(t *testing.T) {
	bin := buildTestServer(t)
	t.Setenv("MCP_TEST_WORKER_SECRET", "worker-only")
	t.Setenv("MCP_TEST_FROM_WORKER", "expanded")
	m, reg := connect(t, Config{Servers: []ServerConfig{{
		Name:    "fx",
		Command: bin,
		Env:     map[string]string{"FIXTURE_VALUE": "configured", "FIXTURE_EXPANDED": "v=${MCP_TEST_FROM_WORKER}"},
	}}})

	t.Run("registry", func(t *testing.T) {
		require.Equal(t, []string{
			"mcp_fx_add", "mcp_fx_dotted_name", "mcp_fx_echo", "mcp_fx_env",
			"mcp_fx_fail", "mcp_fx_mixed", "mcp_fx_pid", "mcp_fx_steps",
		}, reg.Names())
		tests := []struct {
			name   string
			effect tools.SideEffect
			desc   string
			props  []string
		}{
			{"mcp_fx_echo", tools.ReadOnly, "Echo the text back.", []string{"text"}},
			{"mcp_fx_add", tools.AtMostOnce, "Add two numbers.", []string{"a", "b"}},
			{"mcp_fx_fail", tools.AtMostOnce, "Always fails with the given message.", []string{"message"}},
			{"mcp_fx_pid", tools.ReadOnly, "Return the server's process id.", nil},
			{"mcp_fx_dotted_name", tools.AtMostOnce, `Tool "dotted.name" of the MCP server "fx".`, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				def, ok := reg.Lookup(tt.name)
				require.True(t, ok)
				require.Equal(t, tools.SourceMCP, def.Source)
				require.False(t, def.Concurrent, "MCP tools are serial (C2)")
				require.Equal(t, tt.effect, def.SideEffect)
				require.Equal(t, tt.desc, def.Description)
				require.Equal(t, tools.DefaultTimeout+callGrace, def.Timeout, "the call's own timeout, and time to end a server that does not answer")
				var schema struct {
					Type       string         `json:"type"`
					Properties map[string]any `json:"properties"`
				}
				require.NoError(t, json.Unmarshal(def.Parameters, &schema))
				require.Equal(t, "object", schema.Type)
				var props []string
				for p := range schema.Properties {
					props = append(props, p)
				}
				require.ElementsMatch(t, tt.props, props)
			})
		}
		// The registry validates arguments against the server's schema.
		def, _ := reg.Lookup("mcp_fx_add")
		require.Empty(t, tools.Validate(def.Parameters, json.RawMessage(`{"a":1,"b":2}`)))
		require.NotEmpty(t, tools.Validate(def.Parameters, json.RawMessage(`{"a":"x","b":2}`)))
	})

	t.Run("calls", func(t *testing.T) {
		tests := []struct {
			tool, args string
			want       string
			wantErr    string
		}{
			{tool: "mcp_fx_echo", args: `{"text":"hello"}`, want: "hello"},
			{tool: "mcp_fx_add", args: `{"a":2,"b":40}`, want: "42"},
			{tool: "mcp_fx_dotted_name", args: ``, want: "ok"},
			{tool: "mcp_fx_mixed", args: `{}`, want: "first\n[image image/png, 4 bytes]\ninside"},
			{tool: "mcp_fx_env", args: `{"name":"FIXTURE_VALUE"}`, want: "configured"},
			{tool: "mcp_fx_env", args: `{"name":"FIXTURE_EXPANDED"}`, want: "v=expanded"},
			{tool: "mcp_fx_env", args: `{"name":"MCP_TEST_WORKER_SECRET"}`, want: ""},
			{tool: "mcp_fx_fail", args: `{"message":"disk full"}`, wantErr: `mcp server "fx", tool "fail": disk full`},
			// Arguments the server rejects come back as the tool's failure.
			{tool: "mcp_fx_add", args: `{"a":"two"}`, wantErr: `tool "add"`},
		}
		for _, tt := range tests {
			t.Run(tt.tool+tt.args, func(t *testing.T) {
				got, err := call(t, reg, tt.tool, tt.args)
				if tt.wantErr != "" {
					require.ErrorContains(t, err, tt.wantErr)
					require.False(t, tools.IsTransient(err))
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
			})
		}
	})

	t.Run("progress", func(t *testing.T) {
		done := filepath.Join(t.TempDir(), "done")
		var (
			mu  sync.Mutex
			got []string
		)
		ctx := tools.WithProgress(context.Background(), func(details string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, details)
			if len(got) == 2 {
				_ = os.WriteFile(done, nil, 0o600)
			}
		})
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		def, _ := reg.Lookup("mcp_fx_steps")
		args, _ := json.Marshal(map[string]any{"n": 2, "wait_for": done})
		res, err := def.Handler(ctx, tools.Request{Args: args})
		require.NoError(t, err)
		require.Equal(t, "2", res.Content)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"progress 1/2: step 1", "progress 2/2: step 2"}, got)
	})

	t.Run("restart after the process dies", func(t *testing.T) {
		pid1 := status(m, "fx").PID
		require.NotZero(t, pid1)
		got, err := call(t, reg, "mcp_fx_pid", `{}`)
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(pid1), got)
		connects := status(m, "fx").Connects

		require.NoError(t, syscall.Kill(pid1, syscall.SIGKILL))
		require.Eventually(t, func() bool { return !status(m, "fx").Connected }, 10*time.Second, 10*time.Millisecond)

		got, err = call(t, reg, "mcp_fx_add", `{"a":1,"b":1}`)
		require.NoError(t, err)
		require.Equal(t, "2", got)
		st := status(m, "fx")
		require.True(t, st.Connected)
		require.Equal(t, connects+1, st.Connects)
		require.NotEqual(t, pid1, st.PID)
		got, err = call(t, reg, "mcp_fx_pid", `{}`)
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(st.PID), got)
	})

	t.Run("read-only call right after the process dies", func(t *testing.T) {
		pid := status(m, "fx").PID
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		got, err := call(t, reg, "mcp_fx_echo", `{"text":"again"}`)
		require.NoError(t, err)
		require.Equal(t, "again", got)
		require.NotEqual(t, pid, status(m, "fx").PID)
	})
}

func TestStdioServerThatCannotRestart(t *testing.T) {
	bin := buildTestServer(t)
	marker := filepath.Join(t.TempDir(), "started")
	// The first start succeeds; every later one fails.
	script := `if [ -e "$MARKER" ]; then echo "refusing to restart" >&2; exit 1; fi; touch "$MARKER"; exec "$BIN"`
	m, reg := connect(t, Config{Servers: []ServerConfig{{
		Name: "once", Command: "sh", Args: []string{"-c", script},
		Env: map[string]string{"MARKER": marker, "BIN": bin},
	}}})
	pid := status(m, "once").PID
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !status(m, "once").Connected }, 10*time.Second, 10*time.Millisecond)

	_, err := call(t, reg, "mcp_once_echo", `{"text":"x"}`)
	require.ErrorContains(t, err, `mcp server "once", tool "echo": mcp server unreachable`)
	require.True(t, tools.IsTransient(err), "a read-only call that did not run may be retried")

	_, err = call(t, reg, "mcp_once_add", `{"a":1,"b":1}`)
	require.ErrorContains(t, err, "unreachable")
	require.False(t, tools.IsTransient(err))
}

func TestServersThatFailToStart(t *testing.T) {
	bin := buildTestServer(t)
	m, reg := connect(t, Config{
		ConnectTimeout: 2 * time.Second,
		Servers: []ServerConfig{
			{Name: "good", Command: bin},
			{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")},
			{Name: "exits", Command: "sh", Args: []string{"-c", "echo broken config >&2; exit 3"}},
			{Name: "silent", Command: "sleep", Args: []string{"60"}},
			{Name: "unset", Command: bin, Env: map[string]string{"TOKEN": "${MCP_TEST_SURELY_UNSET}"}},
			{Name: "nohttp", URL: "http://127.0.0.1:1/mcp"},
		},
	})
	for _, name := range reg.Names() {
		require.True(t, strings.HasPrefix(name, "mcp_good_"), name)
	}
	require.Len(t, reg.Names(), 8)

	errs := map[string]string{
		"missing": "start",
		"exits":   "the server's stderr ends with: broken config",
		"silent":  "handshake",
		"unset":   "${MCP_TEST_SURELY_UNSET} is not set",
		"nohttp":  "handshake",
	}
	for _, st := range m.Status() {
		if st.Name == "good" {
			require.NoError(t, st.Err)
			require.True(t, st.Connected)
			require.Len(t, st.Tools, 8)
			continue
		}
		require.ErrorContains(t, st.Err, errs[st.Name], st.Name)
		require.False(t, st.Connected)
		require.Empty(t, st.Tools)
	}
}

func TestConnectRefusesInvalidConfig(t *testing.T) {
	tests := map[string]Config{
		"no transport": {Servers: []ServerConfig{{Name: "a"}}},
		"duplicate":    {Servers: []ServerConfig{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}},
		"empty name":   {Servers: []ServerConfig{{Command: "x"}}},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Connect(context.Background(), cfg)
			require.Error(t, err)
		})
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv := fixture.New()
	var requests atomic.Int64
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "missing token", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Setenv("MCP_TEST_TOKEN", "s3cret")

	m, reg := connect(t, Config{Servers: []ServerConfig{
		{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}"}},
		{Name: "noauth", URL: ts.URL},
	}})
	require.ErrorContains(t, status(m, "noauth").Err, "handshake")
	require.Equal(t, "http", status(m, "web").Transport)
	require.Len(t, reg.Names(), 8)

	def, ok := reg.Lookup("mcp_web_echo")
	require.True(t, ok)
	require.Equal(t, tools.ReadOnly, def.SideEffect)
	require.Equal(t, tools.SourceMCP, def.Source)

	got, err := call(t, reg, "mcp_web_echo", `{"text":"over http"}`)
	require.NoError(t, err)
	require.Equal(t, "over http", got)
	_, err = call(t, reg, "mcp_web_fail", `{"message":"nope"}`)
	require.ErrorContains(t, err, "nope")

	// The server forgets the session: the next call opens a new one.
	connects := status(m, "web").Connects
	for ss := range srv.Sessions() {
		require.NoError(t, ss.Close())
	}
	got, err = call(t, reg, "mcp_web_add", `{"a":20,"b":1}`)
	require.NoError(t, err)
	require.Equal(t, "21", got)
	require.Equal(t, connects+1, status(m, "web").Connects)

	// A server that is gone: a clear, transient failure for a read-only tool.
	// (The client holds its standalone event stream open, so the server's
	// connections are cut first, as a server that dies cuts them.)
	ts.CloseClientConnections()
	ts.Close()
	_, err = call(t, reg, "mcp_web_echo", `{"text":"x"}`)
	require.ErrorContains(t, err, `mcp server "web", tool "echo"`)
	require.True(t, tools.IsTransient(err), "%v", err)
}

func TestToolNames(t *testing.T) {
	none := func(string) bool { return false }
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool string
		taken        func(string) bool
		want         string
	}{
		{"fs", "read_file", none, "mcp_fs_read_file"},
		{"my.server", "get thing/now", none, "mcp_my_server_get_thing_now"},
		{"s", "naïve", none, "mcp_s_na_ve"},
		{"s", "a-b_C9", none, "mcp_s_a-b_C9"},
	}
	for _, tt := range tests {
		got, ok := toolName(tt.server, tt.tool, tt.taken)
		require.True(t, ok)
		require.Equal(t, tt.want, got)
	}

	got, ok := toolName("s", long, none)
	require.True(t, ok)
	require.Len(t, got, 64)
	require.True(t, strings.HasPrefix(got, "mcp_s_xxx"))
	again, _ := toolName("s", long, none)
	require.Equal(t, got, again, "names are stable")
	other, _ := toolName("s", long+"y", none)
	require.NotEqual(t, got, other)

	// "a.b" and "a_b" sanitise alike: the second gets a hashed name.
	first, _ := toolName("s", "a.b", none)
	second, ok := toolName("s", "a_b", func(n string) bool { return n == first })
	require.True(t, ok)
	require.NotEqual(t, first, second)
	require.Regexp(t, `^mcp_s_a_b_[0-9a-f]{8}$`, second)

	_, ok = toolName("s", "a", func(string) bool { return true })
	require.False(t, ok)
}

func TestInputSchema(t *testing.T) {
	tests := []struct {
		name     string
		in       any
		want     string
		replaced bool
	}{
		{"missing", nil, `{"type":"object"}`, false},
		{"no type", map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}},
			`{"properties":{"x":{"type":"string"}},"type":"object"}`, false},
		{"object", json.RawMessage(`{"type":"object","required":["a"]}`), `{"required":["a"],"type":"object"}`, false},
		{"draft 2020-12", map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, false},
		{"not an object", "string", `{"type":"object"}`, true},
		{"array type", map[string]any{"type": "array"}, `{"type":"object"}`, true},
		{"does not compile", map[string]any{"type": "object", "properties": 5}, `{"type":"object"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, note := inputSchema(tt.in)
			require.JSONEq(t, tt.want, string(got))
			require.Equal(t, tt.replaced, note != "", note)
			_, err := tools.CompileSchema(got)
			require.NoError(t, err)
		})
	}
}

func TestParseConfig(t *testing.T) {
	good := `{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "b"}, "autoApprove": []},
		"web": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}, "timeout_seconds": 10},
		"off": {"command": "x", "disabled": true}
	}}`
	cfg, err := ParseConfig([]byte(good))
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 2)
	require.Equal(t, ServerConfig{Name: "fs", Command: "npx", Args: []string{"-y", "server-fs", "/tmp"}, Env: map[string]string{"A": "b"}}, cfg.Servers[0])
	require.Equal(t, "web", cfg.Servers[1].Name)
	require.Equal(t, 10.0, cfg.Servers[1].TimeoutSeconds)

	bad := []struct{ name, file, want string }{
		{"not json", `{`, "not a JSON object"},
		{"no servers", `{"servers": {}}`, `no "mcpServers"`},
		{"servers not an object", `{"mcpServers": []}`, `"mcpServers" is not an object`},
		{"neither", `{"mcpServers": {"a": {}}}`, `server "a": needs "command" (stdio) or "url"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`, `server "a": has both`},
		{"bad url", `{"mcpServers": {"a": {"url": "ftp://h/"}}}`, `server "a": url "ftp://h/" is not an http or https URL`},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "http://h/"}}}`, `type "sse"`},
		{"unknown type", `{"mcpServers": {"a": {"type": "ws", "url": "http://h/"}}}`, `unknown type "ws"`},
		{"stdio without command", `{"mcpServers": {"a": {"type": "stdio", "url": "http://h/"}}}`, `type "stdio" needs "command"`},
		{"headers on stdio", `{"mcpServers": {"a": {"command": "x", "headers": {"h": "v"}}}}`, `"headers" only apply`},
		{"env on http", `{"mcpServers": {"a": {"url": "http://h/", "env": {"h": "v"}}}}`, `"args", "env" and "cwd" only apply`},
		{"wrong type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, `server "a": json: cannot unmarshal`},
		{"negative timeout", `{"mcpServers": {"a": {"command": "x", "timeout_seconds": -1}}}`, "timeout_seconds is negative"},
		{"empty name", `{"mcpServers": {" ": {"command": "x"}}}`, "the name is empty"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.file))
			require.ErrorContains(t, err, tt.want)
		})
	}

	path := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(path, []byte(good), 0o600))
	cfg, err = LoadConfig(path)
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 2)
	_, err = LoadConfig(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorContains(t, err, "mcp: config")
}

func TestResultTextCap(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("é", 10)}}}
	got := resultText(res, 5, "", nil)
	require.Equal(t, "éé\n[output truncated: 16 more bytes]", got)
	res = &sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}}
	require.Equal(t, `{"n":1}`, resultText(res, 100, "", nil))
}

func TestResultImagesKeepTheBytes(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 0xff}
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "a shot"},
		&sdk.ImageContent{MIMEType: "image/png", Data: png},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte{1}},
	}}
	require.Equal(t, "a shot\n[image image/png, 6 bytes]\n[audio audio/wav, 1 bytes]", resultText(res, 1000, "", nil), "the text keeps a line for the image")
	require.Equal(t, []round.Image{{MIMEType: "image/png", Size: 6, Data: png}}, resultImages(res))
	require.Nil(t, resultImages(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "x"}}}))
}
