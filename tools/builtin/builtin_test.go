package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func registry(t *testing.T) *tools.Registry {
	t.Helper()
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	reg := tools.NewRegistry()
	b, err := Register(reg, Config{Workdir: wd, SecretKey: make([]byte, 32)})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return reg
}

// concurrentBuiltins are the built-ins of C1; neverConcurrent those C2
// names. Each definition's Concurrent is the one record of it; these are
// the spec's lists it is checked against.
var (
	concurrentBuiltins = []string{
		"read_files", "find_files", "find_tools", "file_history", "chat_history",
		"error_history", "write_error", "fetch_page", "search_web", "http_request",
		"public_api_list", "download_file", "test_tool", "calculate", "subagents",
		"background_subagents", "list_chatbot", "send_to_chatbot", "reasoning_guide",
		"html_template", "write_todo",
	}
	neverConcurrent = []string{
		"generate_audio", "generate_image", "edit_file", "remove_file", "restore_file",
		"run_command", "background_command", "ask_user",
	}
)

// TestCatalog checks C1 and C2 against what is registered: every built-in
// C1 names has a handler and a schema and runs concurrently, unless the host
// application provides it; every other built-in (C2's and the untagged
// ones) is serial.
func TestCatalog(t *testing.T) {
	reg := registry(t)
	for _, name := range concurrentBuiltins {
		d, ok := reg.Lookup(name)
		require.True(t, ok, "C1 tool %s is registered", name)
		require.True(t, d.Concurrent, "C1: %s is concurrent", name)
	}
	for _, name := range neverConcurrent {
		require.False(t, slices.Contains(concurrentBuiltins, name), name)
		d, ok := reg.Lookup(name)
		require.True(t, ok, "C2 tool %s is registered", name)
		require.False(t, d.Concurrent, "C2: %s is serial", name)
	}
	for _, d := range reg.Definitions() {
		require.Equal(t, slices.Contains(concurrentBuiltins, d.Name), d.Concurrent, "%s: concurrency per C1/C2", d.Name)
	}
	for _, d := range reg.Definitions() {
		require.NotEmpty(t, d.Description, d.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(d.Parameters, &schema), d.Name)
		require.Equal(t, "object", schema["type"], d.Name)
		require.Equal(t, tools.SourceBuiltin, d.Source, d.Name)
	}
}

func TestCoreArgumentNames(t *testing.T) {
	reg := registry(t)
	want := map[string][]string{
		"find_tools": {"query"}, "read_files": {"paths"}, "find_files": {"pattern", "path"},
		"edit_file": {"path", "new_text", "old_text"}, "remove_file": {"path"}, "restore_file": {"path", "version"},
		"file_history": {"path"}, "run_command": {"command", "timeout_seconds"}, "background_command": {"command"},
		"http_request": {"url", "method", "headers", "body"}, "fetch_page": {"url", "query"}, "search_web": {"query"},
		"download_file": {"url", "path"}, "calculate": {"expression"}, "write_todo": {"items"},
		"write_error": {"tool", "error", "outcome", "resolution"}, "error_history": {"tool", "query"},
		"store_secret": {"name", "value"}, "ask_user": {"questions"},
	}
	for name, args := range want {
		d, ok := reg.Lookup(name)
		require.True(t, ok, name)
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(d.Parameters, &schema))
		for _, a := range args {
			require.Contains(t, schema.Properties, a, "%s(%s) per SPEC's core tool arguments", name, a)
		}
	}
}

func TestFindTools(t *testing.T) {
	reg := registry(t)
	ft, _ := reg.Lookup(tools.FindTools)
	run := func(args string) (tools.Result, error) {
		return ft.Handler(context.Background(), tools.Request{Tool: tools.FindTools, Args: json.RawMessage(args)})
	}
	res, err := run(`{"query":"select:read_files,edit_file"}`)
	require.NoError(t, err)
	require.Equal(t, []string{"read_files", "edit_file"}, res.Fetched, "S4: the tools returned are marked fetched")
	require.Contains(t, res.Content, `"name":"read_files"`)
	require.Contains(t, res.Content, `"parameters":`)

	res, err = run(`{"query":"run a shell command"}`)
	require.NoError(t, err)
	require.Contains(t, res.Fetched, "run_command")

	res, err = run(`{"query":"select:read_files,run_websocket"}`)
	require.NoError(t, err)
	require.Equal(t, []string{"read_files"}, res.Fetched)
	require.Contains(t, res.Content, "no replacement")

	_, err = run(`{"query":"select:nothing_like_it"}`)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "no tool matches"))
}

// TestEveryBuiltinSchemaCompiles checks each built-in's parameters: a JSON
// Schema of an object that compiles, kept compact as tools.Schema and
// encoding/json leave it.
func TestEveryBuiltinSchemaCompiles(t *testing.T) {
	reg := registry(t)
	defs := reg.Definitions()
	require.NotEmpty(t, defs)
	for _, d := range defs {
		_, err := tools.CompileSchema(d.Parameters)
		require.NoError(t, err, d.Name)
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, d.Parameters), d.Name)
		require.Equal(t, b.String(), string(d.Parameters), "%s: compact", d.Name)
	}
}

// seedTools are the tools the seeds name, run_tool aside.
var seedTools = []string{
	"ask_user", "background_command", "background_subagents", "calculate", "chat_history", "download_file",
	"edit_file", "error_history", "fetch_page", "file_history", "find_files", "find_tools", "generate_audio",
	"generate_image", "html_template", "http_request", "list_chatbot", "public_api_list", "read_files",
	"reasoning_guide", "remove_file", "restore_file", "run_command", "search_web", "send_to_chatbot",
	"store_secret", "subagents", "test_tool", "write_error", "write_result", "write_todo",
}

// TestClaudeCodeListsEverySeedTool: claude-code's tools array holds every
// tool the seeds name but run_tool (S2), all of them shipping with the
// worker: no host application needs to register one.
func TestClaudeCodeListsEverySeedTool(t *testing.T) {
	require.Len(t, seedTools, 31)
	reg := registry(t)
	var names []string
	for _, s := range reg.ToolsFor(tools.ProviderClaudeCode, nil).Tools {
		names = append(names, s.Function.Name)
	}
	for _, n := range seedTools {
		require.Contains(t, names, n)
	}
	require.NotContains(t, names, tools.RunTool)
}
