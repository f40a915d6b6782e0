package workflows

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/builtin"
)

// TestFailureTextsOfRealTools pins what the model reads when a built-in tool
// fails: the handler's error as the activity reports it (err.Error()), after
// FailureContent (P3.2). Wherever a tool's name is added to its errors, these
// texts stay as they are.
func TestFailureTextsOfRealTools(t *testing.T) {
	wd, err := tools.OpenWorkdir(filepath.Join(t.TempDir(), "work"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	reg := tools.NewRegistry()
	b, err := builtin.Register(reg, builtin.Config{Workdir: wd, SecretKey: make([]byte, 32)})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	byName := map[string]tools.Definition{}
	for _, d := range reg.Definitions() {
		byName[d.Name] = *d
	}
	hint := func(tool string) string {
		return "\nnext: succeed another way, then record what worked with write_error(tool=\"" + tool + "\", error=<the error>, outcome=\"resolved\", resolution=<what worked>)."
	}
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"edit_file", `{"path":"../x.txt","new_text":"a"}`, `tool=edit_file failed: path "../x.txt" is outside the workdir`},
		{"edit_file", `{"path":"nope.txt","old_text":"a","new_text":"b"}`, "tool=edit_file failed: nope.txt: no such file; omit old_text to create it, or find the file with find_files"},
		{"remove_file", `{"paths":["nope.txt"]}`, "tool=remove_file failed: path is empty"},
		{"restore_file", `{"path":"nope.txt"}`, "tool=restore_file failed: no versions of nope.txt are kept; file_history lists what is kept"},
		{"find_files", `{"pattern":"["}`, `tool=find_files failed: pattern "[" is not a valid glob (check its brackets and braces)`},
		{"read_files", `{"paths":[]}`, "tool=read_files failed: paths is empty: give at least one file or folder path"},
		{"download_file", `{"url":"::bad","path":"x"}`, `tool=download_file failed: url "::bad" does not parse: parse "::bad": missing protocol scheme`},
		{"file_history", `{"path":"../x"}`, `tool=file_history failed: path "../x" is outside the workdir`},
		{"run_command", `{"command":"true","timeout_seconds":0}`, "tool=run_command failed: timeout_seconds must be between 1 and 1800, got 0; use background_command for longer work"},
		{"background_command", `{"command":"true","id":"bg-1"}`, "tool=background_command failed: give either command (to start a process) or id (to read or stop one), not both"},
		{"background_command", `{"id":"bg-00000000"}`, `tool=background_command failed: unknown id "bg-00000000"; no background process was started in this workdir`},
		{"calculate", `{"expression":"1 / 0"}`, "tool=calculate failed: division by zero (1:3)\n | 1 / 0\n | ..^"},
		{"write_todo", `{"items":[{"text":"a","status":"pending"}]}`, "tool=write_todo failed: the call has no session id; per-session data cannot be kept without one"},
		{"html_template", `{}`, "tool=html_template failed: give name (a built-in template) or template (template text)"},
		{"write_result", `{"content":""}`, "tool=write_result failed: the call has no session id; per-session data cannot be kept without one"},
		{"http_request", `{"method":"GE T","url":"http://example.com/"}`, `tool=http_request failed: GE T http://example.com/: method "GE T" is not an HTTP method`},
		{"search_web", `{"query":"   "}`, "tool=search_web failed: the query is empty"},
		{"fetch_page", `{"url":7}`, "tool=fetch_page failed: invalid arguments: json: cannot unmarshal number into Go struct field fetchPageArgs.url of type string"},
		{"find_tools", `{"query":"zzzqqq"}`, `tool=find_tools failed: no tool matches "zzzqqq"; the tools are: …`},
		{"run_command", `{"command":"exit 3"}`, "tool=run_command failed: exit code 3 after …"},
	} {
		d, ok := byName[tc.tool]
		require.True(t, ok, tc.tool)
		_, err := d.Handler(context.Background(), tools.Request{Tool: tc.tool, Args: json.RawMessage(tc.args)})
		require.Error(t, err, "%s %s", tc.tool, tc.args)
		got := FailureContent(tc.tool, err.Error())
		if want, ok := strings.CutSuffix(tc.want, "…"); ok { // the rest varies
			require.True(t, strings.HasPrefix(got, want), got)
			require.True(t, strings.HasSuffix(got, hint(tc.tool)), got)
			continue
		}
		require.Equal(t, tc.want+hint(tc.tool), got, "%s %s", tc.tool, tc.args)
	}
}
