package command

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

var startedRE = regexp.MustCompile(`^started (bg-[0-9a-f]{8}) \(pid (\d+)\)`)

// startBG starts a background command and returns its id and pid.
func startBG(t *testing.T, tl *Tools, command string) (string, int) {
	t.Helper()
	res, err := call(context.Background(), tools.Typed(tl.backgroundCommand), cmdArgs(t, map[string]any{"command": command}))
	require.NoError(t, err)
	m := startedRE.FindStringSubmatch(res.Content)
	require.NotNil(t, m, res.Content)
	pid, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	return m[1], pid
}

func bg(t *testing.T, tl *Tools, fields map[string]any) (string, error) {
	t.Helper()
	res, err := call(context.Background(), tools.Typed(tl.backgroundCommand), cmdArgs(t, fields))
	return res.Content, err
}

func mustBG(t *testing.T, tl *Tools, fields map[string]any) string {
	t.Helper()
	out, err := bg(t, tl, fields)
	require.NoError(t, err)
	return out
}

func TestBackgroundStartStatusStop(t *testing.T) {
	tl, wd := newTools(t, nil)
	id, pid := startBG(t, tl, "echo ready; sleep 100 & echo $! > child; sleep 100")

	var status string
	require.Eventually(t, func() bool {
		status = mustBG(t, tl, map[string]any{"id": id})
		return strings.Contains(status, "ready\n")
	}, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, status, id+": running for")
	require.Contains(t, status, "command: echo ready; sleep 100 & echo $! > child; sleep 100")
	child := waitPID(t, wd, "child")
	logData, err := os.ReadFile(filepath.Join(wd.Dir(), backgroundDir, id+".log"))
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(logData))
	_, err = wd.Rel(filepath.Join(backgroundDir, id+".log"))
	require.ErrorContains(t, err, "reserved")

	out := mustBG(t, tl, map[string]any{"id": id, "stop": true})
	require.Contains(t, out, "killed by SIGTERM after")
	require.Contains(t, out, "(stopped on request)")
	require.Contains(t, out, "ready\n")
	requireGone(t, pid, child)

	require.Contains(t, mustBG(t, tl, map[string]any{"id": id}), "killed by SIGTERM")
	require.Contains(t, mustBG(t, tl, map[string]any{"id": id, "stop": true}), "already ended; nothing to stop")
}

func TestBackgroundExitCodeAndWait(t *testing.T) {
	tl, _ := newTools(t, nil)
	out := mustBG(t, tl, map[string]any{"command": "echo out; echo err >&2; exit 3", "wait_seconds": 10})
	m := startedRE.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.Contains(t, out, m[1]+": exited with code 3 after")
	require.Contains(t, out, "out\nerr\n")
	require.Contains(t, mustBG(t, tl, map[string]any{"id": m[1]}), "exited with code 3")

	// wait_seconds on a read returns early when the process ends.
	id, _ := startBG(t, tl, "while [ ! -f go ]; do sleep 0.01; done; echo finished")
	require.Contains(t, mustBG(t, tl, map[string]any{"id": id, "wait_seconds": 0.1}), "running for")
	require.NoError(t, os.WriteFile(filepath.Join(tl.cfg.Workdir.Dir(), "go"), nil, 0o644))
	start := time.Now()
	out = mustBG(t, tl, map[string]any{"id": id, "wait_seconds": 60})
	require.Less(t, time.Since(start), 30*time.Second)
	require.Contains(t, out, "exited with code 0")
	require.Contains(t, out, "finished\n")
}

func TestBackgroundSandbox(t *testing.T) {
	t.Setenv("TOOLROUND_TEST_SECRET", "hidden-value")
	tl, wd := newTools(t, func(c *Config) { c.PassEnv = []string{"PATH", "TOOLROUND_*"} })
	out := mustBG(t, tl, map[string]any{"command": "pwd; env; cat; echo stdin=$?", "wait_seconds": 10})
	require.Contains(t, out, "exited with code 0")
	require.Contains(t, out, wd.Dir()+"\n")
	require.Contains(t, out, "stdin=0")
	require.NotContains(t, out, "hidden-value")
}

func TestBackgroundStopsLeftoversWhenItEnds(t *testing.T) {
	tl, wd := newTools(t, nil)
	out := mustBG(t, tl, map[string]any{"command": "sleep 100 & echo $! > child", "wait_seconds": 10})
	require.Contains(t, out, "exited with code 0")
	child := waitPID(t, wd, "child")
	require.Eventually(t, func() bool { return !processAlive(child) }, 5*time.Second, 10*time.Millisecond)
}

func TestBackgroundPaging(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.OutputLimit = 1000 })
	out := mustBG(t, tl, map[string]any{"command": "seq 1 2000", "wait_seconds": 10})
	id := startedRE.FindStringSubmatch(out)[1]
	const size = 8893 // bytes of `seq 1 2000`
	tests := []struct {
		name    string
		offset  any
		head    string
		prefix  string
		suffix  string
		wantErr string
	}{
		{name: "tail by default", offset: nil, head: "output: the last 1000 of 8893 bytes (read from the start with offset 0):\n", suffix: "1999\n2000\n"},
		{name: "from the start", offset: 0, head: "output: bytes 0-1000 of 8893; read on with offset 1000:\n", prefix: "1\n2\n3\n"},
		{name: "the middle", offset: 1000, head: "output: bytes 1000-2000 of 8893; read on with offset 2000:\n"},
		{name: "the end", offset: size - 5, head: "output: bytes 8888-8893 of 8893:\n", suffix: "2000\n"},
		{name: "at the end", offset: size, head: "output: nothing after byte 8893\n"},
		{name: "past the end", offset: size + 1, wantErr: "offset 8894 is past the end of the output, which has 8893 bytes"},
		{name: "negative", offset: -1, wantErr: "offset must be 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"id": id}
			if tt.offset != nil {
				args["offset"] = tt.offset
			}
			out, err := bg(t, tl, args)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			_, body, ok := strings.Cut(out, tt.head)
			require.True(t, ok, "%q lacks %q", out, tt.head)
			require.LessOrEqual(t, len(body), 1000)
			require.True(t, strings.HasPrefix(body, tt.prefix), body)
			require.True(t, strings.HasSuffix(body, tt.suffix), body)
		})
	}
}

func TestBackgroundLimit(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.MaxBackground = 2 })
	id1, _ := startBG(t, tl, "sleep 100")
	id2, _ := startBG(t, tl, "sleep 100")
	_, err := bg(t, tl, map[string]any{"command": "sleep 100"})
	require.ErrorContains(t, err, "2 background processes are running, the limit")
	require.ErrorContains(t, err, id1)
	require.ErrorContains(t, err, id2)
	mustBG(t, tl, map[string]any{"id": id1, "stop": true})
	startBG(t, tl, "sleep 100")
}

func TestBackgroundStatusSurvivesRestart(t *testing.T) {
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	defer wd.Close()
	first, err := New(Config{Workdir: wd})
	require.NoError(t, err)
	out := mustBG(t, first, map[string]any{"command": "echo hi; exit 4", "wait_seconds": 10})
	id := startedRE.FindStringSubmatch(out)[1]
	require.NoError(t, first.Close())

	second, err := New(Config{Workdir: wd})
	require.NoError(t, err)
	defer second.Close()
	out = mustBG(t, second, map[string]any{"id": id})
	require.Contains(t, out, id+": exited with code 4")
	require.Contains(t, out, "hi\n")
}

func TestBackgroundLost(t *testing.T) {
	tl, wd := newTools(t, nil)

	// A process a stopped worker started: it still runs in its own group.
	orphan := exec.Command("sleep", "100")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, orphan.Start())
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	t.Cleanup(func() { _ = orphan.Process.Kill() })
	ps, ok := readStat(orphan.Process.Pid)
	require.True(t, ok)
	old := bgStatus{ID: "bg-0000aaaa", Command: "sleep 100", PID: orphan.Process.Pid, StartTicks: ps.startTime,
		Started: time.Now().Add(-time.Minute), Worker: "old-host pid 1", Instance: "old"}
	require.NoError(t, wd.Root().MkdirAll(backgroundDir, 0o755))
	require.NoError(t, tl.writeStatus(old))
	require.NoError(t, wd.Root().WriteFile(logPath(old.ID), []byte("old output\n"), 0o644))

	out := mustBG(t, tl, map[string]any{"id": old.ID})
	require.Contains(t, out, "lost: the worker that ran it stopped (it ran on old-host pid 1")
	require.Contains(t, out, "still runs as pid "+strconv.Itoa(old.PID))
	require.Contains(t, out, "old output\n")

	out = mustBG(t, tl, map[string]any{"id": old.ID, "stop": true})
	require.Contains(t, out, "stopped on request after the worker that ran it stopped")
	select {
	case err := <-exited:
		require.ErrorContains(t, err, "signal: terminated")
	case <-time.After(10 * time.Second):
		t.Fatal("the lost process was not stopped")
	}

	// A lost process that has ended since, its pid taken by another process.
	other := exec.Command("sleep", "100")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	ps, ok = readStat(other.Process.Pid)
	require.True(t, ok)
	gone := bgStatus{ID: "bg-0000bbbb", Command: "true", PID: other.Process.Pid, StartTicks: ps.startTime - 1,
		Started: time.Now().Add(-time.Hour), Worker: "old-host pid 1", Instance: "old"}
	require.NoError(t, tl.writeStatus(gone))
	out = mustBG(t, tl, map[string]any{"id": gone.ID})
	require.Contains(t, out, "lost: the worker that ran it stopped")
	require.Contains(t, out, "the process no longer runs")
	require.Contains(t, out, "output: none (its log file is gone)")
	_, err := bg(t, tl, map[string]any{"id": gone.ID, "stop": true})
	require.ErrorContains(t, err, "the process no longer runs")
	require.True(t, processAlive(other.Process.Pid), "stop killed an unrelated process")
}

func TestBackgroundClose(t *testing.T) {
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	defer wd.Close()
	tl, err := New(Config{Workdir: wd, KillGrace: 300 * time.Millisecond})
	require.NoError(t, err)
	id, pid := startBG(t, tl, "sleep 100")
	require.NoError(t, tl.Close())
	requireGroupGone(t, pid)
	_, err = bg(t, tl, map[string]any{"command": "true"})
	require.ErrorContains(t, err, "shutting down")

	next, err := New(Config{Workdir: wd})
	require.NoError(t, err)
	defer next.Close()
	require.Contains(t, mustBG(t, next, map[string]any{"id": id}), "killed by SIGTERM")
	require.Contains(t, mustBG(t, next, map[string]any{"id": id}), "(stopped because the worker shut down)")
}

func TestBackgroundLogLimit(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.BackgroundLogLimit = 1000 })
	id, pid := startBG(t, tl, "while true; do echo 0123456789; sleep 0.01; done")
	require.Eventually(t, func() bool {
		return strings.Contains(mustBG(t, tl, map[string]any{"id": id}), "(stopped because its output passed 1000 bytes)")
	}, 10*time.Second, 20*time.Millisecond)
	requireGroupGone(t, pid)
}

func TestBackgroundBadInput(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.MaxWait = 10 * time.Second })
	def := tl.backgroundDefinition()
	tests := []struct {
		name      string
		args      string
		schemaBad bool
		want      string
	}{
		{"no arguments", `{}`, false, "give command to start a process, or id to read its status"},
		{"command and id", `{"command": "true", "id": "bg-1"}`, false, "give either command (to start a process) or id (to read or stop one), not both"},
		{"command with stop", `{"command": "true", "stop": true}`, false, "stop and offset go with id"},
		{"command with offset", `{"command": "true", "offset": 3}`, false, "stop and offset go with id"},
		{"stop with offset", `{"id": "bg-1", "stop": true, "offset": 3}`, false, "offset does not go with stop"},
		{"empty command", `{"command": ""}`, true, "the command is empty"},
		{"unknown id", `{"id": "bg-00000000"}`, false, `unknown id "bg-00000000"; no background process was started`},
		{"path as id", `{"id": "../../etc/passwd"}`, false, `unknown id "../../etc/passwd"`},
		{"stop unknown id", `{"id": "bg-00000000", "stop": true}`, false, `unknown id`},
		{"negative offset", `{"id": "bg-1", "offset": -1}`, true, "offset must be 0 or more"},
		{"wait too long", `{"id": "bg-1", "wait_seconds": 11}`, true, "wait_seconds must be between 0 and 10"},
		{"id not a string", `{"id": 7}`, true, "invalid arguments"},
		{"unknown field", `{"command": "true", "cwd": "/"}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violations := tools.Validate(def.Parameters, []byte(tt.args))
			require.Equal(t, tt.schemaBad, len(violations) > 0, "violations: %v", violations)
			if tt.want == "" {
				return
			}
			_, err := call(context.Background(), tools.Typed(tl.backgroundCommand), tt.args)
			require.ErrorContains(t, err, tt.want)
			require.False(t, strings.HasPrefix(err.Error(), "background_command"), "the failure text adds the name: %s", err)
		})
	}

	id, _ := startBG(t, tl, "true")
	_, err := bg(t, tl, map[string]any{"id": "bg-ffffffff"})
	require.ErrorContains(t, err, "known ids: "+id)
}

func TestBackgroundDefinition(t *testing.T) {
	tl, _ := newTools(t, nil)
	def := tl.backgroundDefinition()
	require.Equal(t, BackgroundCommand, def.Name)
	require.False(t, def.Concurrent)
	require.Equal(t, tools.AtMostOnce, def.SideEffect)
	require.True(t, def.NoDedupe)
	require.True(t, def.Volatile)
	require.Equal(t, tools.SourceBuiltin, def.Source)
	require.Greater(t, def.Timeout, tl.cfg.MaxWait)
	tests := []struct {
		args    string
		effect  tools.SideEffect
		subject string
	}{
		{`{"command": "npm run dev"}`, tools.AtMostOnce, "npm run dev"},
		{`{"id": "bg-1"}`, tools.ReadOnly, "bg-1"},
		{`{"id": "bg-1", "offset": 5}`, tools.ReadOnly, "bg-1"},
		{`{"id": "bg-1", "stop": true}`, tools.Idempotent, "bg-1"},
		{`{}`, tools.AtMostOnce, ""},
		{`not json`, tools.AtMostOnce, ""},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			require.Equal(t, tt.effect, tools.EffectOf(&def, []byte(tt.args)))
			require.Equal(t, tt.subject, def.Subject([]byte(tt.args)))
		})
	}
}
