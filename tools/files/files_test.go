package files

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

var allTools = []string{"read_files", "find_files", "edit_file", "remove_file", "restore_file", "file_history", "download_file", "generate_image", "generate_audio"}

func TestRegister(t *testing.T) {
	e := newEnv(t, nil)
	reg := tools.NewRegistry()
	require.NoError(t, Register(reg, Config{Workdir: e.wd}))
	require.ElementsMatch(t, allTools, reg.Names())

	for _, name := range allTools {
		d, ok := reg.Lookup(name)
		require.True(t, ok)
		require.Equal(t, tools.SourceBuiltin, d.Source, name)
		require.NotEmpty(t, d.Description, name)
		require.Positive(t, d.Timeout, name)
		var s map[string]any
		require.NoError(t, json.Unmarshal(d.Parameters, &s), name)
		require.Equal(t, "object", s["type"], name)
		require.Equal(t, false, s["additionalProperties"], name)
		for prop, v := range s["properties"].(map[string]any) {
			require.NotEmpty(t, v.(map[string]any)["description"], "%s.%s has a description", name, prop)
		}
	}

	want := map[string]struct {
		effect   tools.SideEffect
		volatile bool
	}{
		"read_files":    {tools.ReadOnly, false},
		"find_files":    {tools.ReadOnly, true},
		"file_history":  {tools.ReadOnly, true},
		"edit_file":     {tools.AtMostOnce, false},
		"remove_file":   {tools.AtMostOnce, false},
		"restore_file":  {tools.AtMostOnce, false},
		"download_file": {tools.AtMostOnce, false},
	}
	for name, w := range want {
		d, _ := reg.Lookup(name)
		require.Equal(t, w.effect, d.SideEffect, name)
		require.Equal(t, w.volatile, d.Volatile, name)
	}
	for _, name := range []string{"edit_file", "remove_file", "restore_file", "download_file"} {
		d, _ := reg.Lookup(name)
		require.Equal(t, "src/a.go", tools.SubjectOf(d, json.RawMessage(`{"path":"src/a.go","new_text":"x","url":"http://h/"}`)), name)
	}
	d, _ := reg.Lookup("read_files")
	require.NotNil(t, d.Sensitive)

	require.ErrorContains(t, Register(reg, Config{Workdir: e.wd}), "already registered")
	require.ErrorContains(t, Register(tools.NewRegistry(), Config{}), "Workdir is required")
}

func TestSensitiveRead(t *testing.T) {
	for _, tc := range []struct {
		args string
		want bool
	}{
		{`{"paths":["a.txt"]}`, false},
		{`{"paths":["a.txt",".env"]}`, true},
		{`{"paths":["deploy/prod.pem"]}`, true},
		{`{"paths":["home/.ssh/config"]}`, true},
		{`{"paths":["src/id_rsa"]}`, true},
		{`{"paths":["docs/envelope.md"]}`, false},
		{`{"paths":".env"}`, false}, // not an array: schema validation refuses it
		{`{"paths":[1,".env"]}`, true},
		{`not json`, false},
		{``, false},
	} {
		require.Equal(t, tc.want, sensitiveRead(json.RawMessage(tc.args)), tc.args)
	}
}

// The schemas themselves catch wrong types and missing fields before a
// handler runs (P1.7).
func TestSchemasRejectBadInput(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"read_files", `{}`, "paths"},
		{"read_files", `{"paths":"a.txt"}`, "paths: Invalid type"},
		{"read_files", `{"paths":[]}`, "paths"},
		{"read_files", `{"paths":[7]}`, "paths.0"},
		{"read_files", `{"paths":[""]}`, "paths.0"},
		{"read_files", `{"paths":["a"],"offset":0}`, "offset"},
		{"read_files", `{"paths":["a"],"limit":"10"}`, "limit"},
		{"read_files", `{"paths":["a"],"mode":"x"}`, "mode"},
		{"find_files", `{}`, "pattern"},
		{"find_files", `{"pattern":["*.go"]}`, "pattern"},
		{"find_files", `{"pattern":"*.go","path":3}`, "path"},
		{"edit_file", `{}`, "path"},
		{"edit_file", `{"path":"a.txt"}`, "new_text"},
		{"edit_file", `{"path":"a.txt","new_text":5}`, "new_text"},
		{"edit_file", `{"path":"a.txt","new_text":"x","old_text":""}`, "old_text"},
		{"edit_file", `{"path":true,"new_text":"x"}`, "path"},
		{"remove_file", `{}`, "path"},
		{"remove_file", `{"path":""}`, "path"},
		{"restore_file", `{"path":"a.txt","version":"2"}`, "version"},
		{"restore_file", `{"path":"a.txt","version":0}`, "version"},
		{"restore_file", `{"path":"a.txt","version":1.5}`, "version"},
		{"file_history", `{"paths":["a.txt"]}`, "path"},
		{"download_file", `{"url":"http://x/"}`, "path"},
		{"download_file", `{"path":"a"}`, "url"},
		{"download_file", `{"url":1,"path":"a"}`, "url"},
		{"download_file", `[]`, "must be a JSON object"},
	} {
		errs := tools.Validate(e.defs[tc.tool].Parameters, json.RawMessage(tc.args))
		require.NotEmpty(t, errs, "%s %s", tc.tool, tc.args)
		require.Contains(t, strings.Join(errs, "; "), tc.want, "%s %s", tc.tool, tc.args)
	}
	for _, tc := range []struct{ tool, args string }{
		{"read_files", `{"paths":["a.txt","b/"],"offset":3,"limit":10}`},
		{"find_files", `{"pattern":"**/*.go","path":"src"}`},
		{"edit_file", `{"path":"a.txt","new_text":"","old_text":"x"}`},
		{"remove_file", `{"path":"a.txt"}`},
		{"restore_file", `{"path":"a.txt","version":3}`},
		{"restore_file", `{"path":"a.txt"}`},
		{"file_history", `{"path":"a.txt"}`},
		{"download_file", `{"url":"https://example.com/x","path":"x"}`},
	} {
		require.Empty(t, tools.Validate(e.defs[tc.tool].Parameters, json.RawMessage(tc.args)), "%s %s", tc.tool, tc.args)
	}
}

// Handlers must give a clear error, never panic, on arguments that skipped
// validation: missing fields and wrong types.
func TestHandlersOnBadInput(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "hello\n")
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"read_files", `{}`, "paths is empty"},
		{"read_files", ``, "paths is empty"},
		{"read_files", `{"paths":"a.txt"}`, "invalid arguments"},
		{"read_files", `{"paths":["a.txt"],"offset":-1}`, "cannot be negative"},
		{"read_files", `[1,2]`, "invalid arguments"},
		{"find_files", `{}`, "pattern is empty"},
		{"find_files", `{"pattern":1}`, "invalid arguments"},
		{"edit_file", `{}`, "new_text is missing"},
		{"edit_file", `{"new_text":"x"}`, "path is empty"},
		{"edit_file", `{"path":"a.txt","new_text":"x","old_text":""}`, "old_text is empty"},
		{"edit_file", `{"path":"a.txt","new_text":null}`, "new_text is missing"},
		{"edit_file", `{"path":["a.txt"],"new_text":"x"}`, "invalid arguments"},
		{"remove_file", `{}`, "path is empty"},
		{"remove_file", `{"path":" "}`, "path is empty"},
		{"restore_file", `{}`, "path is empty"},
		{"restore_file", `{"path":"a.txt","version":0}`, "count from 1"},
		{"restore_file", `{"path":"a.txt","version":"1"}`, "invalid arguments"},
		{"file_history", `{}`, "path is empty"},
		{"download_file", `{}`, "url is missing"},
		{"download_file", `{"url":"http://127.0.0.1:1/x"}`, "path is missing"},
		{"download_file", `{"url":"ftp://host/x","path":"x"}`, "not http or https"},
		{"download_file", `{"url":"http://","path":"x"}`, "no host"},
		{"download_file", `{"url":"::bad","path":"x"}`, "does not parse"},
		{"download_file", `{"url":"http://x/","path":{}}`, "invalid arguments"},
	} {
		_, err := e.callRaw(tc.tool, json.RawMessage(tc.args))
		require.Error(t, err, "%s %s", tc.tool, tc.args)
		require.Contains(t, err.Error(), tc.want, "%s %s", tc.tool, tc.args)
		require.False(t, strings.HasPrefix(err.Error(), tc.tool), "the failure text adds the name: %v", err)
	}
	require.Equal(t, "hello\n", e.content("a.txt"), "no bad call changed the file")
}
