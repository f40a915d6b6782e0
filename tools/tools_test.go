package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func noop(context.Context, Request) (Result, error) { return Text("ok"), nil }

func def(name string) Definition {
	return Definition{Name: name, Description: name + " does things", Handler: noop, SideEffect: ReadOnly}
}

func TestRegisterRejectsBadDefinitions(t *testing.T) {
	reg := NewRegistry()
	require.NoError(t, reg.Register(def("read_files")))
	tests := []struct {
		d    Definition
		want string
	}{
		{def("read_files"), "already registered"},
		{def(""), "a name is 1-64"},
		{def("has space"), "a name is 1-64"},
		{def(strings.Repeat("x", 65)), "a name is 1-64"},
		{def("run_tool"), "reserved"},
		{def("run_websocket"), "no replacement"},
		{def("api_weather"), "public_api_list"},
		{Definition{Name: "x"}, "no handler"},
		{Definition{Name: "x", Handler: noop, SideEffect: "sometimes"}, "unknown side-effect class"},
		{Definition{Name: "x", Handler: noop, Parameters: json.RawMessage(`{"type":"string"}`)}, "want object"},
		{Definition{Name: "x", Handler: noop, Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)}, "does not compile"},
		{Definition{Name: "x", Handler: noop, Parameters: json.RawMessage(`[`)}, "not a JSON object"},
	}
	for _, tt := range tests {
		err := reg.Register(tt.d)
		require.Error(t, err, tt.d.Name)
		require.Contains(t, err.Error(), tt.want)
	}
}

func TestRegisterDefaults(t *testing.T) {
	reg := NewRegistry()
	reg.MustRegister(
		Definition{Name: "plain", Handler: noop},
		Definition{Name: "mcp_x_y", Handler: noop, Source: SourceMCP, Concurrent: true},
		Definition{Name: "ask", Handler: noop, Interactive: true, Concurrent: true},
	)
	d, _ := reg.Lookup("plain")
	require.Equal(t, AtMostOnce, d.SideEffect, "side effects are at-most-once by default (P2.4)")
	require.Equal(t, SourceApp, d.Source)
	require.JSONEq(t, `{"type":"object"}`, string(d.Parameters))
	require.Equal(t, DefaultTimeout, d.EffectiveTimeout())
	d, _ = reg.Lookup("mcp_x_y")
	require.False(t, d.Concurrent, "C2: MCP tools always run serially")
	d, _ = reg.Lookup("ask")
	require.False(t, d.Concurrent, "C2: interactive tools always run serially")
}

func TestMissing(t *testing.T) {
	reg := NewRegistry()
	reg.MustRegister(def("read_files"), def("find_files"), def("edit_file"), def("run_command"), def("background_command"))
	tests := map[string]string{
		"read_file":              `unknown tool "read_file"; closest known tools: read_files`,
		"run_command_background": "renamed: call background_command",
		"run_websocket":          "removed in v1.3.2 and has no replacement",
		"run_command_readonly":   "removed in v1.0.25",
		"find_note":              "removed in v1.0.23",
		"api_github":             "api_* tools were removed in v1.3.2",
		"zzzzzzzzzzzzzzzz":       `unknown tool "zzzzzzzzzzzzzzzz"`,
	}
	for name, want := range tests {
		msg, missing := reg.Missing(name)
		require.True(t, missing, name)
		require.Contains(t, msg, want, name)
	}
	_, missing := reg.Missing("read_files")
	require.False(t, missing)
	msg, _ := reg.Missing("zzzzzzzzzzzzzzzz")
	require.NotContains(t, msg, "closest", "no suggestion when nothing is close")
}

func TestToolsFor(t *testing.T) {
	reg := NewRegistry()
	for _, n := range []string{"find_tools", "reasoning_guide", "write_todo", "chat_history", "ask_user", "write_result", "read_files", "edit_file"} {
		reg.MustRegister(def(n))
	}
	client := []ToolSpec{{Type: "function", Function: FunctionSpec{Name: "ide_open", Parameters: json.RawMessage(`{"type":"object"}`)}}}

	names := func(ts Toolset) []string {
		var out []string
		for _, t := range ts.Tools {
			out = append(out, t.Function.Name)
		}
		return out
	}
	open := reg.ToolsFor("openai", client)
	require.Equal(t, []string{"ask_user", "chat_history", "find_tools", "reasoning_guide", "run_tool", "write_result", "write_todo", "ide_open"}, names(open), "S1")
	require.Equal(t, []string{"edit_file", "read_files"}, open.Deferred)
	require.Contains(t, open.TurnContext, "edit_file, read_files")
	require.Contains(t, open.TurnContext, "run_tool(name, args)")

	cc := reg.ToolsFor(ProviderClaudeCode, client)
	require.NotContains(t, names(cc), "run_tool", "S2")
	require.Contains(t, names(cc), "edit_file")
	require.Contains(t, names(cc), "ide_open")
	require.Empty(t, cc.Deferred)

	pre := Preloaded(ProviderClaudeCode, reg.Names(), client)
	require.Equal(t, map[string]bool{"find_tools": true, "ide_open": true, "read_result": true}, pre, "S2: only find_tools, read_result (B3) and client tools start marked")
}

func TestToolSpecAcceptsBothShapes(t *testing.T) {
	var specs []ToolSpec
	require.NoError(t, json.Unmarshal([]byte(`[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"name":"b","description":"B"}]`), &specs))
	require.Equal(t, "a", specs[0].Function.Name)
	require.Equal(t, "b", specs[1].Function.Name)
	require.Equal(t, "function", specs[1].Type)
}

func TestSchemaResult(t *testing.T) {
	s := SchemaResult(FunctionSpec{Name: "x", Description: `say "<hi>"`, Parameters: json.RawMessage(`{"type": "object"}`)})
	require.Contains(t, s, `{"name":"x","description":"say \"<hi>\"","parameters":{"type":"object"}}`)
	require.Contains(t, s, "Call x again")
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[3, 2]}`, `{"a":[3,2],"b":1}`},
		{` { "x" : { "z" : null , "y" : "<&>" } } `, `{"x":{"y":"<&>","z":null}}`},
		{`1.50`, `1.50`},
		{`"s"`, `"s"`},
		{`{"n": 12345678901234567890}`, `{"n":12345678901234567890}`},
	}
	for _, tt := range tests {
		got, ok := Canonical([]byte(tt.in))
		require.True(t, ok, tt.in)
		require.Equal(t, tt.want, got)
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `nope`} {
		_, ok := Canonical([]byte(bad))
		require.False(t, ok, bad)
	}
}

func TestValidateListsEveryViolationWithItsPath(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"object","properties":{"c":{"type":"string"}},"required":["c"]}},"required":["a","b"],"additionalProperties":false}`)
	v := Validate(schema, json.RawMessage(`{"a":"x","b":{"c":1},"z":true}`))
	require.Equal(t, []string{
		"(root): Additional property z is not allowed",
		"a: Invalid type. Expected: integer, given: string",
		"b.c: Invalid type. Expected: string, given: integer",
	}, v)
	require.Empty(t, Validate(schema, json.RawMessage(`{"a":1,"b":{"c":"x"}}`)))
	require.Equal(t, []string{"(root): arguments must be a JSON object, got a string"}, Validate(schema, json.RawMessage(`"x"`)))
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	require.NotEmpty(t, Validate(schema, json.RawMessage(deep)), "deeply nested input is an error, not a crash")
}

func TestSensitivePath(t *testing.T) {
	for _, p := range []string{".env", "app/.env.local", "certs/server.key", "id_rsa", "home/.ssh/config", ".aws/credentials", "x/credentials.json", ".npmrc", "prod.pem"} {
		require.True(t, SensitivePath(p), p)
	}
	for _, p := range []string{"main.go", "README.md", "environment.go", "keyboard.txt", "docs/keys.md"} {
		require.False(t, SensitivePath(p), p)
	}
}

func TestWorkdirConfines(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	wd, err := OpenWorkdir(filepath.Join(dir, "work"))
	require.NoError(t, err)
	defer wd.Close()
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(wd.Dir(), "link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(wd.Dir(), "dirlink")))

	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", ".toolround/versions", ""} {
		_, err := wd.Rel(p)
		require.Error(t, err, p)
	}
	rel, err := wd.Rel(filepath.Join(wd.Dir(), "a", "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "a/b.txt", rel)
	rel, err = wd.Rel("./a/../b")
	require.NoError(t, err)
	require.Equal(t, "b", rel)

	_, err = wd.Root().ReadFile("link")
	require.Error(t, err, "a symlink that leaves the workdir is refused")
	_, err = wd.Root().ReadFile("dirlink/secret")
	require.Error(t, err)
	require.Error(t, wd.Root().WriteFile("dirlink/new", []byte("x"), 0o644))
	_, err = os.Stat(filepath.Join(outside, "new"))
	require.True(t, os.IsNotExist(err))
}

func TestCovers(t *testing.T) {
	require.True(t, Covers("a", "a"))
	require.True(t, Covers("src", "src/a.go"))
	require.True(t, Covers(".", "x"))
	require.False(t, Covers("src", "srcx/a.go"))
	require.False(t, Covers("src/a.go", "src"))
}

func TestRetryPolicies(t *testing.T) {
	ro := Definition{SideEffect: ReadOnly}
	require.True(t, ro.Retryable())
	require.Equal(t, DefaultRetry, ro.EffectiveRetry())
	once := Definition{SideEffect: AtMostOnce}
	require.False(t, once.Retryable())
	idem := Definition{SideEffect: Idempotent, Retry: RetryPolicy{MaxAttempts: 7}}
	require.Equal(t, 7, idem.EffectiveRetry().MaxAttempts)
}

func TestTransient(t *testing.T) {
	require.Nil(t, Transient(nil))
	err := Transient(os.ErrDeadlineExceeded)
	require.True(t, IsTransient(err))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.False(t, IsTransient(os.ErrNotExist))
}

// TestTyped: the handler gets the decoded arguments; arguments that do not
// decode fail the call with Decode's error and never reach it.
func TestTyped(t *testing.T) {
	type args struct {
		Path string `json:"path"`
	}
	ran := 0
	h := Typed(func(_ context.Context, req Request, a args) (Result, error) {
		ran++
		return Text(req.CallID + ":" + a.Path), nil
	})
	res, err := h(context.Background(), Request{CallID: "c", Args: json.RawMessage(`{"path":"a.go"}`)})
	require.NoError(t, err)
	require.Equal(t, "c:a.go", res.Content)
	res, err = h(context.Background(), Request{})
	require.NoError(t, err, "no arguments decode as {}")
	require.Equal(t, ":", res.Content)

	bad := Request{Args: json.RawMessage(`{"path":7}`)}
	_, err = h(context.Background(), bad)
	want := bad.Decode(&args{})
	require.EqualError(t, err, want.Error())
	require.Contains(t, err.Error(), "invalid arguments: ")
	require.Equal(t, 2, ran)
}
