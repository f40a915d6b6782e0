package approval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// T11: every program table with a probe cites a tested range that its
// cited version lies in, and a probe's output is read as the program
// prints it.
func TestVersionProbesAndRanges(t *testing.T) {
	probes := VersionProbes()
	byName := map[string]VersionProbe{}
	for _, p := range probes {
		byName[p.Program] = p
		require.NotEmpty(t, p.Args, p.Program)
		_, _, ok := cutRange(p.Tested)
		require.True(t, ok, "%s: %q", p.Program, p.Tested)
	}
	for _, n := range []string{"git", "tar", "grep", "sed", "find", "sort", "cat", "ls", "make", "npm", "python3", "node", "go", "awk"} {
		require.Contains(t, byName, n, "T11: every tabled program is probed")
	}
	for _, n := range []string{"echo", "cd", "sh", "bash"} {
		require.NotContains(t, byName, n, "the shell and its builtins are not probed")
	}
	require.Equal(t, []string{"version"}, byName["go"].Args)
	require.Equal(t, []string{"-W", "version"}, byName["mawk"].Args)
	for out, want := range map[string]struct {
		tested, version string
		ok              bool
	}{
		"git version 2.39.5":                            {"2.30-2.49", "2.39.5", true},
		"git version 2.49.1":                            {"2.30-2.49", "2.49.1", true},
		"git version 2.50.0":                            {"2.30-2.49", "2.50.0", false},
		"git version 2.25.1":                            {"2.30-2.49", "2.25.1", false},
		"git version 2.30.0.windows.1":                  {"2.30-2.49", "2.30.0", true},
		"v20.11.1":                                      {"18-22", "20.11.1", true},
		"v23.0.0":                                       {"18-22", "23.0.0", false},
		"go version go1.22.1 linux/amd64":               {"1.22-1.26", "1.22.1", true},
		"go version go1.21.9 linux/amd64":               {"1.22-1.26", "1.21.9", false},
		"mawk 1.3.4 20200120":                           {"1.3.3-1.3.4", "1.3.4", true},
		"This is not GNU sed version 4.0":               {"4.7-4.9", "4.0", false},
		"sed: illegal option -- -":                      {"4.7-4.9", "", false},
		"Python 2.7.18":                                 {"3.8-3.13", "2.7.18", false},
		"grep (BSD grep, GNU compatible) 2.6.0-FreeBSD": {"3.4-3.11", "2.6.0", false},
	} {
		v, ok := InTestedRange(out, want.tested)
		require.Equal(t, want.version, v, out)
		require.Equal(t, want.ok, ok, out)
	}
}

func cutRange(s string) (string, string, bool) {
	lo, hi, ok := strings.Cut(s, "-")
	return lo, hi, ok && versionParts(lo) != nil && versionParts(hi) != nil
}

// T11: a program outside its table's tested range matches exact command
// patterns only; exact rules still approve, and the other programs match
// as before.
func TestUntestedProgramsMatchExactCommandsOnly(t *testing.T) {
	rules := []Rule{{Tool: "run_command", Pattern: "git *"}, {Tool: "run_command", Pattern: "git status --short"},
		{Tool: "run_command", Pattern: "grep *"}, {Tool: "run_command", Args: `{"command":"git log -1"}`}}
	call := func(cmd string) Call {
		return Call{Tool: "run_command", Kind: KindCommand, Args: jsonArgs(map[string]any{"command": cmd})}
	}
	pol := Policy{Rules: rules, Tables: TablesCurrent}
	require.False(t, Needs(call("git diff --stat"), pol).Ask, "in range, the pattern matches")
	pol.Untested = []string{"git"}
	require.True(t, Needs(call("git diff --stat"), pol).Ask, "out of range, git * is no longer enough")
	require.False(t, Needs(call("git status --short"), pol).Ask, "the very command still matches")
	require.True(t, Needs(call("git status --short *.go"), pol).Ask)
	require.True(t, Needs(call("git status  --short | cat"), pol).Ask, "cat has no rule")
	require.False(t, Needs(call("git status --short | grep M"), pol).Ask, "grep is in range")
	require.False(t, Needs(call("git log -1"), pol).Ask, "an exact rule is a person's approval of these arguments")
	for _, tables := range []int{TablesLegacy, TablesV2} {
		pol.Tables = tables
		require.Equal(t, tables == TablesV2, Needs(call("git diff --stat"), pol).Ask, "tables %d", tables)
	}
}

// T11: a rule over a program of class runs-workspace-code is consent to
// run the workspace's code; the console and `starter approve` say so with
// this notice before it is remembered, and its scope is write.
func TestWorkspaceCodeNotice(t *testing.T) {
	for _, p := range []string{"python3 *", "python3 manage.py test", "node *", "go test ./...", "npm run build", "make *", "/usr/bin/make test", "bash build.sh"} {
		prog, ok := WorkspaceCodeProgram(p)
		require.True(t, ok, p)
		require.Contains(t, WorkspaceCodePrograms(), prog, p)
		n := WorkspaceCodeNotice(prog)
		require.Contains(t, n, prog+" runs the workspace's code", p)
		require.Contains(t, n, "scope is always write", p)
		rules, err := RememberScoped(TablesCurrent, KindCommand, "run_command", `{"command":"x"}`, p, ScopeReadOnly, false)
		require.NoError(t, err, p)
		require.Equal(t, ScopeWrite, rules[0].Scope, p)
	}
	for _, p := range []string{"git *", "ls -la", "cat *", "src/**", "GET https://x.com/*", "", "cd a && make"} {
		_, ok := WorkspaceCodeProgram(p)
		require.False(t, ok, p)
	}
	require.Equal(t, []string{"bash", "dash", "go", "make", "node", "npm", "python", "python3", "sh"}, WorkspaceCodePrograms())
}
