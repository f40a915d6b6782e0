package tests

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// The escape suite: each attempt is something a command of an agent should
// not be able to do. With SANDBOX=bwrap every attempt must fail; with
// SANDBOX=none the suite records which succeed. The two columns are the
// table in docs/sandbox-table.md and the README, which must match what the
// suite sees: TOOLROUND_UPDATE_SANDBOX_TABLE=1 rewrites them.

const sandboxTableFile = "../docs/sandbox-table.md"

// escapeAttempt is one row of the table.
type escapeAttempt struct {
	name string // the row
	// call is the attempt; nil for the attempts that need steps of their own.
	call func(s *escapeSetup) round.ToolCall
	// escaped tells from the call's result and the files it left whether
	// the attempt succeeded, with what shows it.
	escaped func(s *escapeSetup, r round.CallResult) (bool, string)
	// leaves is set for the attempts to leave a process behind: the call
	// whose marker file must never appear.
	leaves string
}

// escapeSetup is what one mode's run of the suite works with.
type escapeSetup struct {
	e        *env
	outside  string // a folder outside the workdir
	home     string // the worker's HOME, with a key file and ~/.ssh
	sshKey   string // the content of ~/.ssh/id_ed25519
	worker   *worker
	redis    string // host:port
	temporal string // host:port
}

func (s *escapeSetup) marker(name string) string { return filepath.Join(s.e.workdir, name) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// leftMarkers waits until the deadline plus a margin for any of the marker
// files to appear. A marker that must never appear can only be shown absent
// by waiting past the moment its process would have written it.
func leftMarkers(deadline time.Time, paths ...string) []string {
	for {
		var found []string
		for _, p := range paths {
			if exists(p) {
				found = append(found, filepath.Base(p))
			}
		}
		if len(found) > 0 || time.Now().After(deadline.Add(2*time.Second)) {
			return found
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaveBehind is a script that starts a process the way named, which after
// sleeping touches marker, and returns once that process runs.
func leaveBehind(how, started, marker string, sleep int) string {
	inner := fmt.Sprintf("touch %s; sleep %d; touch %s", started, sleep, marker)
	switch how {
	case "setsid":
		return fmt.Sprintf("setsid sh -c '%s' >/dev/null 2>&1 </dev/null &", inner)
	case "nohup":
		return fmt.Sprintf("nohup sh -c '%s' >/dev/null 2>&1 </dev/null &", inner)
	default: // a double fork: the grandchild's parent is gone at once
		return fmt.Sprintf("(sh -c '%s' >/dev/null 2>&1 </dev/null &) ;", inner)
	}
}

const leftSleep = 3

var escapeAttempts = []escapeAttempt{
	{
		name: "write a file outside the workdir",
		call: func(s *escapeSetup) round.ToolCall {
			return call("w1", "run_command", map[string]any{"command": "echo x > " + filepath.Join(s.outside, "escaped")})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return exists(filepath.Join(s.outside, "escaped")), r.Content
		},
	},
	{
		name: "write into the reserved `.toolround/` folder",
		call: func(*escapeSetup) round.ToolCall {
			return call("w2", "run_command", map[string]any{"command": "echo x > .toolround/planted"})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return exists(filepath.Join(s.e.workdir, ".toolround", "planted")), r.Content
		},
	},
	{
		name: "read the worker's environment (`/proc/<worker>/environ`)",
		call: func(s *escapeSetup) round.ToolCall {
			return call("r1", "run_command", map[string]any{"command": fmt.Sprintf("tr '\\0' '\\n' < /proc/%d/environ", s.worker.cmd.Process.Pid)})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return strings.Contains(r.Content, "TASK_QUEUE="+s.e.taskQueue), r.Content
		},
	},
	{
		name: "read the worker's secret key file",
		call: func(*escapeSetup) round.ToolCall {
			return call("r2", "run_command", map[string]any{"command": "wc -c < ~/.config/toolround/secret.key"})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return r.Status == round.StatusOK, r.Content
		},
	},
	{
		name: "read `~/.ssh`",
		call: func(*escapeSetup) round.ToolCall {
			return call("r3", "run_command", map[string]any{"command": "cat ~/.ssh/id_ed25519"})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return strings.Contains(r.Content, s.sshKey), r.Content
		},
	},
	{
		name: "connect to the worker's Redis",
		call: func(s *escapeSetup) round.ToolCall {
			return call("n1", "run_command", map[string]any{"command": connect(s.redis)})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return strings.Contains(r.Content, "connected to "), r.Content
		},
	},
	{
		name: "connect to the worker's Temporal server",
		call: func(s *escapeSetup) round.ToolCall {
			return call("n2", "run_command", map[string]any{"command": connect(s.temporal)})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return strings.Contains(r.Content, "connected to "), r.Content
		},
	},
	{
		name:   "leave a `setsid` process running after the call",
		leaves: "l1",
		call: func(s *escapeSetup) round.ToolCall {
			return call("l1", "run_command", map[string]any{"command": leaveBehind("setsid", "l1.started", "l1.marker", leftSleep) +
				" until [ -e l1.started ]; do sleep 0.01; done"})
		},
	},
	{
		name:   "leave a `nohup` process running after the call",
		leaves: "l2",
		call: func(s *escapeSetup) round.ToolCall {
			return call("l2", "run_command", map[string]any{"command": leaveBehind("nohup", "l2.started", "l2.marker", leftSleep) +
				" until [ -e l2.started ]; do sleep 0.01; done"})
		},
	},
	{
		name:   "leave a double-forked process running after the call",
		leaves: "l3",
		call: func(s *escapeSetup) round.ToolCall {
			return call("l3", "run_command", map[string]any{"command": leaveBehind("fork", "l3.started", "l3.marker", leftSleep) +
				" until [ -e l3.started ]; do sleep 0.01; done"})
		},
	},
	{
		name:   "leave a `setsid` process running after the call's timeout",
		leaves: "l4",
		call: func(s *escapeSetup) round.ToolCall {
			return call("l4", "run_command", map[string]any{"command": leaveBehind("setsid", "l4.started", "l4.marker", leftSleep) +
				" sleep 60", "timeout_seconds": 1})
		},
	},
	{name: "leave a `setsid` process running after a SIGKILL of the worker"},
	{name: "leave a `background_command` running after a SIGKILL of the worker"},
	{name: "leave a child process running after a SIGKILL of the worker"},
	{
		name: "start 200 processes at once (a fork bomb; the test sets COMMAND_MAX_PROCS=64)",
		call: func(*escapeSetup) round.ToolCall {
			return call("f1", "run_command", map[string]any{"command": "for i in $(seq 200); do (touch fork.$i; sleep 2) & done 2>/dev/null; wait; ls | grep -c '^fork\\.'",
				"timeout_seconds": 60})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			n := 0
			for i := 1; i <= 200; i++ {
				if exists(s.marker(fmt.Sprintf("fork.%d", i))) {
					n++
				}
			}
			return n == 200, fmt.Sprintf("%d of 200 processes started", n)
		},
	},
	{
		name: "flood the worker with 2 GB of output",
		call: func(*escapeSetup) round.ToolCall {
			return call("o1", "run_command", map[string]any{"command": "head -c 2000000000 /dev/zero", "timeout_seconds": 120})
		},
		escaped: func(s *escapeSetup, r round.CallResult) (bool, string) {
			return len(r.Content) > 1<<20 || !s.worker.alive(), fmt.Sprintf("%d bytes of result, worker alive: %v", len(r.Content), s.worker.alive())
		},
	},
}

// connect is a command that opens a TCP connection to hostport.
func connect(hostport string) string {
	host, port, _ := strings.Cut(hostport, ":")
	return fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/%s/%s && echo connected to %s'", host, port, hostport)
}

func hostPort(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

// TestSandboxEscapes runs the escape suite in both modes and checks the
// table of what each mode guarantees against what it saw.
func TestSandboxEscapes(t *testing.T) {
	requireBwrap(t)
	results := map[string]map[string]bool{}
	for _, mode := range []string{"bwrap", "none"} {
		ok := t.Run(mode, func(t *testing.T) {
			results[mode] = runEscapes(t, mode)
		})
		require.True(t, ok, "the %s run of the escape suite failed", mode)
	}
	for _, a := range escapeAttempts {
		require.False(t, results["bwrap"][a.name], "escaped the sandbox: %s", a.name)
	}
	table := sandboxTable(results)
	if os.Getenv("TOOLROUND_UPDATE_SANDBOX_TABLE") == "1" {
		require.NoError(t, os.WriteFile(sandboxTableFile, []byte(table), 0o644))
		readme, err := os.ReadFile("../README.md")
		require.NoError(t, err)
		updated, err := replaceTable(string(readme), table)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("../README.md", []byte(updated), 0o644))
	}
	committed, err := os.ReadFile(sandboxTableFile)
	require.NoError(t, err)
	require.Equal(t, table, string(committed), "docs/sandbox-table.md does not match what the escape suite saw; rerun with TOOLROUND_UPDATE_SANDBOX_TABLE=1")
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), table, "the README's sandbox table does not match docs/sandbox-table.md; rerun with TOOLROUND_UPDATE_SANDBOX_TABLE=1")
}

const (
	tableStart = "<!-- sandbox-table: generated by TestSandboxEscapes -->\n"
	tableEnd   = "<!-- /sandbox-table -->\n"
)

func sandboxTable(results map[string]map[string]bool) string {
	var b strings.Builder
	b.WriteString("| a command tries to | `SANDBOX=bwrap` | `SANDBOX=none` |\n|---|---|---|\n")
	cell := func(escaped bool) string {
		if escaped {
			return "**succeeds**"
		}
		return "fails"
	}
	for _, a := range escapeAttempts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", a.name, cell(results["bwrap"][a.name]), cell(results["none"][a.name]))
	}
	return b.String()
}

// replaceTable puts table between the markers of the README.
func replaceTable(readme, table string) (string, error) {
	i := strings.Index(readme, tableStart)
	j := strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("the README has no %q ... %q block", strings.TrimSpace(tableStart), strings.TrimSpace(tableEnd))
	}
	return readme[:i+len(tableStart)] + table + readme[j:], nil
}

// requireBwrap fails under CI and skips elsewhere when bubblewrap is missing.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if testenv.InCI() {
			t.Fatalf("bubblewrap is required in CI: %v", err)
		}
		t.Skipf("bubblewrap is not installed (Debian: apt-get install bubblewrap): %v", err)
	}
}

// TestSandboxEscapesWithoutPidsCgroup runs the escape suite with the pids
// cgroup turned off, as on a machine that offers none: a root worker then
// runs commands as an unprivileged user with RLIMIT_NPROC (SPEC T8), and
// every attempt must still fail, the fork bomb included.
func TestSandboxEscapesWithoutPidsCgroup(t *testing.T) {
	requireBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("commands change user only under a root worker")
	}
	escaped := runEscapes(t, "bwrap", "TOOLROUND_TEST_NO_PIDS_CGROUP=1")
	for _, a := range escapeAttempts {
		require.False(t, escaped[a.name], "escaped the sandbox: %s", a.name)
	}
}

// runEscapes runs every attempt with SANDBOX=mode and the extra worker
// environment, and reports which succeeded. In mode bwrap each one must
// fail.
func runEscapes(t *testing.T, mode string, extra ...string) map[string]bool {
	home := t.TempDir()
	s := &escapeSetup{outside: t.TempDir(), home: home, sshKey: "not-a-real-key-" + mode,
		redis: hostPort(t, testenv.RedisURL()), temporal: temporalAddress()}
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte(s.sshKey+"\n"), 0o600))
	s.e = newEnv(t, append([]string{"SANDBOX=" + mode, "COMMAND_MAX_PROCS=64", "HOME=" + home, "XDG_CONFIG_HOME=", "TOOLROUND_SECRET_KEY=", "TOOLROUND_SECRET_KEY_FILE="}, extra...)...)
	noPids := slices.Contains(extra, "TOOLROUND_TEST_NO_PIDS_CGROUP=1")
	if noPids {
		// The commands' user needs search access to the folders above the
		// workdir, which t.TempDir makes for the worker's user alone.
		require.NoError(t, os.Chmod(filepath.Dir(s.e.workdir), 0o711))
		require.NoError(t, os.Chmod(filepath.Dir(filepath.Dir(s.e.workdir)), 0o711))
	}
	// The tools' own folder exists once a file was edited or a background
	// command started; the attempt is to write into it, not to create it.
	require.NoError(t, os.MkdirAll(filepath.Join(s.e.workdir, ".toolround"), 0o755))
	s.worker = s.e.startWorker()
	require.Contains(t, s.worker.logs.String(), "sandbox="+mode, "the worker log does not say which mode is active")
	if noPids {
		require.Contains(t, s.worker.logs.String(), "RLIMIT_NPROC; no pids cgroup, so commands run as uid 65533", "the worker log does not say what bounds the process count")
	}
	require.FileExists(t, filepath.Join(home, ".config", "toolround", "secret.key"))

	escaped := map[string]bool{}
	record := func(name string, did bool, evidence string) {
		escaped[name] = did
		t.Logf("%-75s escaped=%-5v %s", name, did, firstLine(evidence))
		if mode == "bwrap" {
			require.False(t, did, "%s: the attempt succeeded in the sandbox: %s", name, evidence)
		}
	}

	var calls []round.ToolCall
	ids := map[string]string{} // attempt name -> call id
	for _, a := range escapeAttempts {
		if a.call != nil {
			c := a.call(s)
			calls = append(calls, c)
			ids[a.name] = c.ID
		}
	}
	// A background command that outlives its round as it should, waiting to
	// be released after the worker is killed.
	calls = append(calls, call("b1", "background_command", map[string]any{
		"command": "touch b1.started; until [ -e release ]; do sleep 0.05; done; touch b1.marker"}))
	in := s.e.input(1, "claude-code", &round.RunState{Fetched: append(allTools, "background_command")}, calls...)
	in.AutoApprove = true
	res := s.e.round(in)
	roundEnd := time.Now()
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	for _, c := range r {
		require.Contains(t, c.Content, "[sandbox: "+mode, "%s: the result does not say which mode ran it", c.CallID)
	}
	for _, a := range escapeAttempts {
		if a.escaped != nil {
			did, evidence := a.escaped(s, r[ids[a.name]])
			record(a.name, did, evidence)
		}
	}
	// Every leftover process was running when its call returned (or timed
	// out); each touches its marker leftSleep seconds after it started.
	for _, id := range []string{"l1", "l2", "l3", "l4"} {
		require.FileExists(t, s.marker(id+".started"), "%s: the process to leave behind never started: %s", id, r[id].Content)
	}
	deadline := roundEnd.Add(leftSleep * time.Second)
	for _, a := range escapeAttempts {
		if a.leaves != "" {
			found := leftMarkers(deadline, s.marker(a.leaves+".marker"))
			record(a.name, len(found) > 0, strings.Join(found, ", "))
		}
	}

	// A SIGKILL of the worker while a command runs.
	kin := s.e.input(2, "claude-code", &round.RunState{Fetched: allTools}, call("k1", "run_command", map[string]any{"command": leaveBehind("setsid", "k1.started", "k1.marker", leftSleep) +
		" (sh -c 'touch k2.started; sleep " + fmt.Sprint(leftSleep) + "; touch k2.marker') & sleep 60"}))
	kin.AutoApprove = true
	s.e.startRound(kin)
	require.Eventually(t, func() bool { return exists(s.marker("k1.started")) && exists(s.marker("k2.started")) },
		30*time.Second, 10*time.Millisecond)
	require.FileExists(t, s.marker("b1.started"), r["b1"].Content)
	s.worker.kill(t)
	require.NoError(t, os.WriteFile(s.marker("release"), nil, 0o644))
	tc := s.e.dial(t)
	t.Cleanup(func() {
		_ = tc.TerminateWorkflow(context.Background(), kin.WorkflowID(), "", "the escape suite killed its worker")
	})
	deadline = time.Now().Add(leftSleep * time.Second)
	found := leftMarkers(deadline, s.marker("k1.marker"))
	record("leave a `setsid` process running after a SIGKILL of the worker", len(found) > 0, strings.Join(found, ", "))
	found = leftMarkers(deadline, s.marker("k2.marker"))
	record("leave a child process running after a SIGKILL of the worker", len(found) > 0, strings.Join(found, ", "))
	found = leftMarkers(time.Now(), s.marker("b1.marker"))
	record("leave a `background_command` running after a SIGKILL of the worker", len(found) > 0, strings.Join(found, ", "))
	require.Len(t, escaped, len(escapeAttempts))
	return escaped
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// TestSandboxModeAtStart checks what the worker says at start: SANDBOX=bwrap
// without a usable bubblewrap refuses to start with one line; SANDBOX=auto
// then warns that commands are not sandboxed.
func TestSandboxModeAtStart(t *testing.T) {
	e := newEnv(t)
	noBwrap := "PATH=" + t.TempDir() // bubblewrap cannot be found
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workerBin)
	cmd.Env = append(e.environ(), "SANDBOX=bwrap", noBwrap)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the worker started without bubblewrap:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 1, "not one line:\n%s", out)
	require.Contains(t, lines[0], "SANDBOX=bwrap, but bubblewrap cannot run commands here")

	w := e.startWorkerBin(workerBin, "SANDBOX=auto", noBwrap)
	require.Contains(t, w.logs.String(), "COMMANDS ARE NOT SANDBOXED")
	require.Contains(t, w.logs.String(), "sandbox=none")
	require.Contains(t, w.logs.String(), "no sandbox: rules for commands are off", "T12")
}
