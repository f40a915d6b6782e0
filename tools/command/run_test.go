package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestRunCommandResults(t *testing.T) {
	tl, wd := newTools(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(wd.Dir(), "data.txt"), []byte("from the workdir\n"), 0o644))
	tests := []struct {
		name     string
		command  string
		want     []string // all in the content or error
		wantCode int      // 0: success
	}{
		{"stdout", "echo hello", []string{"exit code 0 after", "hello"}, 0},
		{"stdout and stderr combined in order", "echo out; echo err >&2; echo out2", []string{"out\nerr\nout2\n"}, 0},
		{"no output", "true", []string{"exit code 0", "no output"}, 0},
		{"cwd is the workdir", "pwd; cat data.txt", []string{wd.Dir() + "\n", "from the workdir"}, 0},
		{"stdin is empty", "cat; read line; echo read=$?", []string{"read=1"}, 0},
		{"pipes and redirections", "printf 'b\\na\\n' | sort > s.txt && cat s.txt", []string{"a\nb\n"}, 0},
		{"non-zero exit", "echo boom; exit 3", []string{"exit code 3 after", "boom"}, 3},
		{"command not found", "no_such_command_here", []string{"exit code 127", "not found"}, 127},
		{"killed by a signal", "kill -9 $$", []string{"killed by signal SIGKILL"}, -1},
		{"false", "false", []string{"exit code 1", "no output"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(context.Background(), tools.Typed(tl.runCommand), cmdArgs(t, map[string]any{"command": tt.command}))
			if tt.wantCode == 0 {
				require.NoError(t, err)
				for _, w := range tt.want {
					require.Contains(t, res.Content, w)
				}
				return
			}
			require.Error(t, err)
			var exit *ExitError
			require.True(t, errors.As(err, &exit), "error %T is not an ExitError", err)
			require.Equal(t, tt.wantCode, exit.Code)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRunCommandBadInput(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.MaxTimeout = 10 * time.Second; c.DefaultTimeout = 5 * time.Second })
	def := tl.runDefinition()
	tests := []struct {
		name      string
		args      string
		schemaBad bool   // the engine's schema check refuses it
		want      string // the handler's error
	}{
		{"no arguments", `{}`, true, "the command is empty"},
		{"empty command", `{"command": ""}`, true, "the command is empty"},
		{"blank command", `{"command": "  \n"}`, false, "the command is empty"},
		{"NUL byte", `{"command": "echo a\u0000b"}`, false, "NUL byte"},
		{"command not a string", `{"command": 5}`, true, "invalid arguments"},
		{"not an object", `[1, 2]`, true, "invalid arguments"},
		{"zero timeout", `{"command": "true", "timeout_seconds": 0}`, true, "timeout_seconds must be between 1 and 10"},
		{"timeout over the maximum", `{"command": "true", "timeout_seconds": 11}`, true, "timeout_seconds must be between 1 and 10"},
		{"unknown field", `{"command": "true", "cwd": "/"}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violations := tools.Validate(def.Parameters, []byte(tt.args))
			require.Equal(t, tt.schemaBad, len(violations) > 0, "violations: %v", violations)
			if tt.want == "" {
				return
			}
			_, err := call(context.Background(), tools.Typed(tl.runCommand), tt.args)
			require.ErrorContains(t, err, tt.want)
			require.False(t, strings.HasPrefix(err.Error(), "run_command"), "the failure text adds the name: %s", err)
		})
	}
}

func TestRunCommandTimeoutKillsForkedChildren(t *testing.T) {
	tl, wd := newTools(t, nil)
	start := time.Now()
	_, err := call(context.Background(), tools.Typed(tl.runCommand),
		`{"command": "echo $$ > pid; echo started; sleep 100 & echo $! > child; sleep 100", "timeout_seconds": 1}`)
	require.ErrorContains(t, err, "timed out after 1s")
	require.ErrorContains(t, err, "started")
	require.Less(t, time.Since(start), 10*time.Second)
	requireGone(t, waitPID(t, wd, "pid"), waitPID(t, wd, "child"))
}

func TestRunCommandTimeoutEscalatesToSIGKILL(t *testing.T) {
	tl, wd := newTools(t, nil)
	// Ignored signals are inherited: the sleeps ignore SIGTERM as well.
	start := time.Now()
	_, err := call(context.Background(), tools.Typed(tl.runCommand),
		`{"command": "trap '' TERM; echo $$ > pid; sleep 100 & echo $! > child; sleep 100", "timeout_seconds": 1}`)
	require.ErrorContains(t, err, "timed out")
	require.Less(t, time.Since(start), 10*time.Second)
	requireGone(t, waitPID(t, wd, "pid"), waitPID(t, wd, "child"))
}

func TestRunCommandDefaultTimeout(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.DefaultTimeout = 500 * time.Millisecond })
	start := time.Now()
	_, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "sleep 100"}`)
	require.ErrorContains(t, err, "timed out after 500ms")
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestRunCommandCancelKillsGroup(t *testing.T) {
	tl, wd := newTools(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "sleep 100 & echo $! > child; echo $$ > pid; sleep 100"}`)
		errc <- err
	}()
	pgid, child := waitPID(t, wd, "pid"), waitPID(t, wd, "child")
	cancel()
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("run_command did not return after cancellation")
	}
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "cancelled after")
	requireGone(t, pgid, child)
}

func TestRunCommandStopsLeftovers(t *testing.T) {
	tl, wd := newTools(t, nil)
	tests := []struct{ name, command string }{
		{"leftover holding the output", "sleep 100 & echo $! > child"},
		{"leftover with its own output", "sleep 100 >/dev/null 2>&1 & echo $! > child"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := call(context.Background(), tools.Typed(tl.runCommand), cmdArgs(t, map[string]any{"command": tt.command}))
			require.NoError(t, err)
			require.Contains(t, res.Content, "exit code 0")
			require.Less(t, time.Since(start), 10*time.Second)
			child := waitPID(t, wd, "child")
			require.Eventually(t, func() bool { return !processAlive(child) }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

func TestRunCommandEscapedProcessDoesNotHang(t *testing.T) {
	tl, wd := newTools(t, nil)
	start := time.Now()
	res, err := call(context.Background(), tools.Typed(tl.runCommand),
		`{"command": "echo before; setsid sh -c 'echo $$ > escaped; exec sleep 100' & while [ ! -s escaped ]; do sleep 0.01; done"}`)
	escaped := waitPID(t, wd, "escaped")
	t.Cleanup(func() { _ = syscallKill(escaped) })
	require.NoError(t, err)
	require.Contains(t, res.Content, "before")
	require.Contains(t, res.Content, "output cut")
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestRunCommandCapsHugeOutput(t *testing.T) {
	tl, _ := newTools(t, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	res, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "yes | head -c 200000000"}`)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 60*time.Second)
	runtime.ReadMemStats(&after)
	require.Less(t, len(res.Content), 64<<10+512)
	require.Contains(t, res.Content, "output (200000000 bytes")
	require.Contains(t, res.Content, fmt.Sprintf("... %d bytes omitted ...", 200000000-64<<10))
	require.True(t, strings.HasPrefix(strings.SplitN(res.Content, ":\n", 2)[1], "y\ny\n"))
	// The output is read in small pieces, never held.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20))
}

func TestRunCommandKeepsHeadAndTail(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.OutputLimit = 100 })
	res, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "seq 1 100000"}`)
	require.NoError(t, err)
	body := strings.SplitN(res.Content, ":\n", 2)[1]
	require.True(t, strings.HasPrefix(body, "1\n2\n3\n"), body)
	require.True(t, strings.HasSuffix(body, "99999\n100000\n"), body)
	require.Contains(t, body, "bytes omitted")

	_, err = call(context.Background(), tools.Typed(tl.runCommand), `{"command": "seq 1 100000; exit 1"}`)
	require.ErrorContains(t, err, "100000\n")
	require.Less(t, len(err.Error()), 400)
}

func TestRunCommandEnvironment(t *testing.T) {
	t.Setenv("TOOLROUND_TEST_API_KEY", "key-value-1")
	t.Setenv("TOOLROUND_TEST_TOKEN", "token-value-2")
	t.Setenv("REDIS_URL", "redis://secret-host:6379/0")
	t.Setenv("TEMPORAL_ADDRESS", "secret-temporal:7233")
	t.Setenv("TOOLROUND_TEST_PLAIN", "plain-value")
	t.Setenv("LANG", "C.UTF-8")

	tl, _ := newTools(t, nil)
	res, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "env"}`)
	require.NoError(t, err)
	for _, secret := range []string{"key-value-1", "token-value-2", "secret-host", "secret-temporal", "plain-value"} {
		require.NotContains(t, res.Content, secret)
	}
	require.Contains(t, res.Content, "LANG=C.UTF-8")
	require.Contains(t, res.Content, "PATH=")

	// Listing a secret by name does not pass it; Env sets values explicitly.
	tl2, _ := newTools(t, func(c *Config) {
		c.PassEnv = []string{"TOOLROUND_TEST_*", "REDIS_URL"}
		c.Env = []string{"EXTRA_SETTING=on", "SERVICE_TOKEN=given"}
	})
	res, err = call(context.Background(), tools.Typed(tl2.runCommand), `{"command": "env"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "TOOLROUND_TEST_PLAIN=plain-value")
	require.Contains(t, res.Content, "EXTRA_SETTING=on")
	require.Contains(t, res.Content, "SERVICE_TOKEN=given")
	for _, secret := range []string{"key-value-1", "token-value-2", "secret-host"} {
		require.NotContains(t, res.Content, secret)
	}
	require.NotContains(t, res.Content, "LANG=")
}

func TestBuildEnv(t *testing.T) {
	environ := []string{"PATH=/p", "HOME=/h", "LC_ALL=C", "OPENAI_API_KEY=x", "GITHUB_TOKEN=x", "DB_PASSWORD=x",
		"REDIS_URL=x", "TEMPORAL_NAMESPACE=x", "AWS_SECRET_ACCESS_KEY=x", "OTHER=x", "malformed"}
	tests := []struct {
		name        string
		pass, extra []string
		want        []string
	}{
		{"defaults", DefaultPassEnv, nil, []string{"PATH=/p", "HOME=/h", "LC_ALL=C"}},
		{"everything listed, secrets still out", []string{"*"}, nil, []string{"PATH=/p", "HOME=/h", "LC_ALL=C", "OTHER=x"}},
		{"extra overrides and adds", []string{"PATH"}, []string{"PATH=/q", "A=b=c"}, []string{"PATH=/q", "A=b=c"}},
		{"PATH is always set", nil, nil, []string{"PATH=/usr/local/bin:/usr/bin:/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, BuildEnv(environ, tt.pass, tt.extra))
		})
	}
}

func TestRunCommandReportsProgress(t *testing.T) {
	tl, wd := newTools(t, nil)
	var mu sync.Mutex
	var reports []string
	base, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // a failed test must not leave the loop running
	ctx := tools.WithProgress(base, func(d string) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, d)
	})
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "echo waiting; while [ ! -f go ]; do sleep 0.01; done"}`)
		done <- err
	}()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reports) > 0 && strings.Contains(reports[len(reports)-1], "8 bytes of output")
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(wd.Dir(), "go"), nil, 0o644))
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, reports[0], "run_command: running for")
}

func TestRunDefinition(t *testing.T) {
	tl, _ := newTools(t, func(c *Config) { c.MaxTimeout = 10 * time.Minute })
	def := tl.runDefinition()
	require.Equal(t, RunCommand, def.Name)
	require.False(t, def.Concurrent)
	require.Equal(t, tools.AtMostOnce, def.SideEffect)
	require.True(t, def.Volatile)
	require.False(t, def.NoDedupe)
	require.Equal(t, tools.SourceBuiltin, def.Source)
	require.Greater(t, def.Timeout, 10*time.Minute+tl.cfg.KillGrace)
	require.Equal(t, "ls -la", def.Subject([]byte(`{"command": "ls -la"}`)))
	require.Contains(t, string(def.Parameters), `"maximum":600`)

	reg := tools.NewRegistry()
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	defer wd.Close()
	require.NoError(t, Register(reg, Config{Workdir: wd}))
	require.Equal(t, []string{BackgroundCommand, RunCommand}, reg.Names())
}

func TestConfigErrors(t *testing.T) {
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	defer wd.Close()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no workdir", Config{}, "Workdir is required"},
		{"default over max", Config{Workdir: wd, DefaultTimeout: time.Hour, MaxTimeout: time.Minute}, "exceeds MaxTimeout"},
		{"bad env entry", Config{Workdir: wd, Env: []string{"NOVALUE"}}, "not NAME=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, Register(tools.NewRegistry(), tt.cfg), tt.want)
		})
	}
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
