package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// newSandboxed returns tools whose commands run under bubblewrap.
func newSandboxed(t *testing.T, cfg sandbox.Config) (*Tools, *tools.Workdir) {
	t.Helper()
	return newTools(t, func(c *Config) {
		cfg.Mode = sandbox.ModeBwrap
		sb, err := sandbox.New(cfg, c.Workdir.Dir())
		if err != nil {
			testenv.Unavailable(t, "bubblewrap: %v", err)
		}
		t.Cleanup(sb.Close)
		c.Sandbox = sb
	})
}

// pidsByArgs lists the processes whose command line is args.
func pidsByArgs(args string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") == args && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestResultsSayTheSandboxMode(t *testing.T) {
	tl, _ := newTools(t, nil)
	res, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "echo hi"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "\n[sandbox: none]\n")
	_, err = call(context.Background(), tools.Typed(tl.runCommand), `{"command": "exit 4"}`)
	require.ErrorContains(t, err, "\n[sandbox: none]\n")

	tl, _ = newSandboxed(t, sandbox.Config{})
	res, err = call(context.Background(), tools.Typed(tl.runCommand), `{"command": "echo hi"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "\n[sandbox: bwrap, network none]\n")
	_, err = call(context.Background(), tools.Typed(tl.runCommand), `{"command": "sleep 5", "timeout_seconds": 1}`)
	require.ErrorContains(t, err, "timed out")
	require.ErrorContains(t, err, "\n[sandbox: bwrap, network none]\n")

	res, err = call(context.Background(), tools.Typed(tl.backgroundCommand), `{"command": "echo bg", "wait_seconds": 10}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "[sandbox: bwrap, network none]\n")
	require.Contains(t, res.Content, "exited with code 0")
}

func TestSandboxEndsWhatSetsidLeaves(t *testing.T) {
	for _, mode := range []string{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(mode, func(t *testing.T) {
			var tl *Tools
			if mode == sandbox.ModeBwrap {
				tl, _ = newSandboxed(t, sandbox.Config{})
			} else {
				tl, _ = newTools(t, nil)
			}
			args := fmt.Sprintf("sleep %d", 100000+time.Now().UnixNano()%100000)
			t.Cleanup(func() { killByArgs(args) })
			// The command returns once the setsid process runs.
			res, err := call(context.Background(), tools.Typed(tl.runCommand), cmdArgs(t, map[string]any{
				"command": "setsid " + args + " >/dev/null 2>&1 < /dev/null & " +
					"until ps -eo args | grep -qx '" + args + "'; do sleep 0.01; done; echo started",
				"timeout_seconds": 20}))
			require.NoError(t, err)
			require.Contains(t, res.Content, "started")
			if mode == sandbox.ModeNone {
				// Without the sandbox setsid leaves the process group: the known escape.
				require.NotEmpty(t, pidsByArgs(args), "the setsid process did not outlive the call")
				return
			}
			require.Empty(t, pidsByArgs(args), "the setsid process outlived the call")
		})
	}
}

// killByArgs ends the processes this test left running in mode none.
func killByArgs(args string) {
	for _, pid := range pidsByArgs(args) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestResultsSayWhichLimitCut(t *testing.T) {
	tl, _ := newSandboxed(t, sandbox.Config{MaxProcs: 16, FileSizeBytes: 1 << 20})
	if !strings.Contains(tl.sandbox.Describe(), "pids cgroup") {
		t.Skip("no pids cgroup here: ", tl.sandbox.Warnings())
	}
	_, err := call(context.Background(), tools.Typed(tl.runCommand), `{"command": "for i in $(seq 30); do sleep 3 & done; wait"}`)
	require.Error(t, err)
	require.Contains(t, err.Error(), "cut by the process limit")

	_, err = call(context.Background(), tools.Typed(tl.runCommand), `{"command": "head -c 2000000 /dev/zero > big"}`)
	require.ErrorContains(t, err, "cut by the file size limit")

	res, err := call(context.Background(), tools.Typed(tl.backgroundCommand), `{"command": "head -c 2000000 /dev/zero > big2", "wait_seconds": 10}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "cut by the file size limit")
}

// TestStopGivesSandboxedProcessesSIGTERM: a stopped background command in
// the sandbox gets SIGTERM first, as without it, so a server can shut down
// cleanly.
func TestStopGivesSandboxedProcessesSIGTERM(t *testing.T) {
	tl, wd := newSandboxed(t, sandbox.Config{})
	res, err := call(context.Background(), tools.Typed(tl.backgroundCommand),
		`{"command": "trap 'echo term > term.txt; exit 0' TERM; touch up; while :; do sleep 0.05; done"}`)
	require.NoError(t, err)
	id := strings.Fields(strings.TrimPrefix(res.Content, "started "))[0]
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(wd.Dir(), "up"))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	res, err = call(context.Background(), tools.Typed(tl.backgroundCommand), `{"id": "`+id+`", "stop": true}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "exited with code 0", res.Content)
	b, err := os.ReadFile(filepath.Join(wd.Dir(), "term.txt"))
	require.NoError(t, err, "the command got no SIGTERM")
	require.Equal(t, "term\n", string(b))
}
