package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// Marks that only session A's files and output hold.
const (
	secretA = "A-SECRET-7f3a"
	bgOutA  = "A-BACKGROUND-91c2"
)

// sessionTools is every built-in in session mode, commands under
// bubblewrap (W2); without bubblewrap the test fails in CI and is skipped
// elsewhere.
type sessionTools struct {
	t   *testing.T
	reg *tools.Registry
	wd  *tools.Workdir
	n   int
}

func newSessionTools(t *testing.T) *sessionTools {
	t.Helper()
	wd, err := tools.OpenWorkspaces(t.TempDir(), tools.WorkspaceSession)
	require.NoError(t, err)
	t.Cleanup(func() { wd.Close() })
	sb, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeBwrap}, wd.Dir())
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(sb.Close)
	reg := tools.NewRegistry()
	cfg := Config{Workdir: wd, SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}
	cfg.Command.Sandbox = sb
	b, err := Register(reg, cfg)
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return &sessionTools{t: t, reg: reg, wd: wd}
}

// call runs tool with args as a call of session, as ExecuteTool does; the
// text is the result or the error.
func (s *sessionTools) call(session, tool, args string) (string, error) {
	s.t.Helper()
	def, ok := s.reg.Lookup(tool)
	require.True(s.t, ok, tool)
	s.n++
	ctx, cancel := context.WithTimeout(tools.WithSession(context.Background(), session), time.Minute)
	defer cancel()
	id := fmt.Sprintf("c%d", s.n)
	res, err := def.Handler(ctx, tools.Request{Tool: tool, CallID: id, SessionID: session, RunID: "r", Round: 1,
		WorkflowID: "toolround/" + session + "/r/1", OperationID: "toolround/" + session + "/r/1/" + id, Args: json.RawMessage(args)})
	if err != nil {
		return err.Error(), err
	}
	return res.Content, nil
}

func (s *sessionTools) ok(session, tool, args string) string {
	s.t.Helper()
	out, err := s.call(session, tool, args)
	require.NoError(s.t, err, "%s %s %s", session, tool, args)
	return out
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestWorkspaceEscapes is the escape suite of W2: session B tries, as an
// attacker would, to read, list, change or run anything of session A's
// workspace; every attempt fails and A's files stay as they were.
func TestWorkspaceEscapes(t *testing.T) {
	s := newSessionTools(t)
	top := s.wd.Dir()
	wsA := filepath.Join(top, tools.SessionsDir, "a")

	// Session A: a file, an earlier version of it, a background command's
	// output.
	s.ok("a", "edit_file", `{"path": "secret.txt", "new_text": "old `+secretA+`\n"}`)
	s.ok("a", "edit_file", `{"path": "secret.txt", "new_text": "`+secretA+`\n"}`)
	started := s.ok("a", "background_command", `{"command": "echo `+bgOutA+`", "wait_seconds": 10}`)
	require.Contains(t, started, bgOutA)
	idA := regexp.MustCompile(`^started ([A-Za-z0-9_-]+) `).FindStringSubmatch(started)
	require.NotNil(t, idA, "the background command's id in %q", started)
	require.Contains(t, s.ok("a", "read_files", `{"paths": ["secret.txt"]}`), secretA, "A reads its own file")
	require.Contains(t, s.ok("a", "background_command", `{"id": "`+idA[1]+`"}`), bgOutA, "A reads its own output")
	entriesA, err := os.ReadDir(wsA)
	require.NoError(t, err)

	// Session B starts out with a file of its own.
	s.ok("b", "edit_file", `{"path": "mine.txt", "new_text": "b\n"}`)
	absA := filepath.Join(wsA, "secret.txt")

	attempts := []struct{ tool, args string }{
		// Reads by relative and absolute path, of the file, its folder, the workdir.
		{"read_files", `{"paths": ["../a/secret.txt"]}`},
		{"read_files", `{"paths": ["../../sessions/a/secret.txt"]}`},
		{"read_files", `{"paths": [` + q(absA) + `]}`},
		{"read_files", `{"paths": [` + q(wsA) + `]}`},
		{"read_files", `{"paths": [".."]}`},
		{"read_files", `{"paths": [` + q(top) + `]}`},
		{"read_files", `{"paths": [` + q(filepath.Join(top, tools.SessionsDir)) + `]}`},
		// A's own state folder: its versions and background output.
		{"read_files", `{"paths": ["../a/.toolround/background"]}`},
		{"read_files", `{"paths": [` + q(filepath.Join(wsA, tools.ReservedDir, "background", idA[1]+".log")) + `]}`},
		{"read_files", `{"paths": [".toolround/background/` + idA[1] + `.log"]}`},
		// Listings.
		{"find_files", `{"pattern": "**/secret.txt", "path": ".."}`},
		{"find_files", `{"pattern": "**/secret.txt", "path": ` + q(top) + `}`},
		{"find_files", `{"pattern": ` + q(absA) + `}`},
		{"find_files", `{"pattern": "../a/*"}`},
		// History and restores of A's file.
		{"file_history", `{"path": "../a/secret.txt"}`},
		{"file_history", `{"path": ` + q(absA) + `}`},
		{"restore_file", `{"path": "../a/secret.txt", "version": 1}`},
		{"restore_file", `{"path": ` + q(absA) + `, "version": 1}`},
		// Changes.
		{"edit_file", `{"path": "../a/secret.txt", "new_text": "owned"}`},
		{"edit_file", `{"path": ` + q(absA) + `, "new_text": "owned"}`},
		{"edit_file", `{"path": "../a/planted.txt", "new_text": "planted"}`},
		{"remove_file", `{"path": "../a/secret.txt"}`},
		{"remove_file", `{"path": ` + q(wsA) + `}`},
		{"remove_file", `{"path": ".."}`},
		// A's background command, by its id.
		{"background_command", `{"id": "` + idA[1] + `"}`},
		{"background_command", `{"id": "` + idA[1] + `", "stop": true}`},
		// Commands: by path, by listing, by link, by hard link.
		{"run_command", `{"command": "cat ../a/secret.txt"}`},
		{"run_command", `{"command": "cat ` + absA + `"}`},
		{"run_command", `{"command": "ls -laR ` + top + `"}`},
		{"run_command", `{"command": "find / \\( -path /usr -o -path /proc -o -path /sys \\) -prune -o -name secret.txt -print 2>/dev/null | xargs -r cat"}`},
		{"run_command", `{"command": "grep -r ` + secretA[:6] + ` ` + top + ` /tmp /run /var 2>/dev/null"}`},
		{"run_command", `{"command": "ln ` + absA + ` hard.txt && cat hard.txt"}`},
		{"run_command", `{"command": "echo planted > ` + filepath.Join(wsA, "planted.txt") + `"}`},
		{"run_command", `{"command": "cat ` + filepath.Join(wsA, tools.ReservedDir, "background", idA[1]+".log") + `"}`},
		{"background_command", `{"command": "cat ` + absA + `; ls -R ` + top + `", "wait_seconds": 10}`},
	}
	for _, a := range attempts {
		out, _ := s.call("b", a.tool, a.args)
		require.NotContains(t, out, secretA, "%s %s", a.tool, a.args)
		require.NotContains(t, out, bgOutA, "%s %s", a.tool, a.args)
		if !strings.Contains(a.args, "secret.txt") {
			require.NotContains(t, out, "secret.txt", "%s %s lists A's file", a.tool, a.args)
		}
	}

	// Links that B's commands make to A's files lead nowhere for B's file
	// tools, whatever the sandbox let the command make.
	s.ok("b", "run_command", `{"command": "ln -s `+absA+` abs-link; ln -s ../a rel-link; ln -s `+wsA+` dir-link; ln -s `+top+` top-link; true"}`)
	for _, p := range []string{"abs-link", "rel-link/secret.txt", "dir-link/secret.txt", "top-link/sessions/a/secret.txt", "top-link"} {
		for _, a := range []struct{ tool, args string }{
			{"read_files", `{"paths": [` + q(p) + `]}`},
			{"edit_file", `{"path": ` + q(p) + `, "new_text": "owned"}`},
			{"find_files", `{"pattern": "**", "path": ` + q(p) + `}`},
			{"remove_file", `{"path": ` + q(p) + `}`},
		} {
			out, _ := s.call("b", a.tool, a.args)
			require.NotContains(t, out, secretA, "%s %s", a.tool, a.args)
		}
	}

	// Nothing of A's changed.
	got, err := os.ReadFile(absA)
	require.NoError(t, err)
	require.Equal(t, secretA+"\n", string(got))
	after, err := os.ReadDir(wsA)
	require.NoError(t, err)
	require.Equal(t, names(entriesA), names(after), "no file was added to or taken from A's workspace")
	require.Contains(t, s.ok("a", "background_command", `{"id": "`+idA[1]+`"}`), bgOutA, "A's background command is still A's")
	history := s.ok("a", "file_history", `{"path": "secret.txt"}`)
	require.NotContains(t, history, "mine.txt")

	// B's own work is in B's folder only.
	require.FileExists(t, filepath.Join(top, tools.SessionsDir, "b", "mine.txt"))
	require.NoFileExists(t, filepath.Join(top, "mine.txt"))
	require.NoFileExists(t, filepath.Join(wsA, "mine.txt"))
}

// TestWorkspaceSameNamesApart: two sessions' files of the same name, and
// their versions, are apart; what one edits, the other never reads.
func TestWorkspaceSameNamesApart(t *testing.T) {
	s := newSessionTools(t)
	s.ok("a", "edit_file", `{"path": "notes.md", "new_text": "from a\n"}`)
	s.ok("b", "edit_file", `{"path": "notes.md", "new_text": "from b\n"}`)
	require.Contains(t, s.ok("a", "read_files", `{"paths": ["notes.md"]}`), "from a")
	require.Contains(t, s.ok("b", "read_files", `{"paths": ["notes.md"]}`), "from b")
	require.Contains(t, s.ok("b", "run_command", `{"command": "cat notes.md"}`), "from b")
	s.ok("a", "edit_file", `{"path": "notes.md", "new_text": "a again\n"}`)
	ha := s.ok("a", "file_history", `{"path": "notes.md"}`)
	hb := s.ok("b", "file_history", `{"path": "notes.md"}`)
	require.NotEqual(t, ha, hb)
	require.NotContains(t, s.ok("b", "read_files", `{"paths": ["notes.md"]}`), "from a")
	// A call with no session has no workspace in session mode.
	_, err := s.call("", "read_files", `{"paths": ["notes.md"]}`)
	require.ErrorContains(t, err, "session id")
	_, err = s.call("..", "read_files", `{"paths": ["notes.md"]}`)
	require.Error(t, err)
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
