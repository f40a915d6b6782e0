package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
)

// newBwrap is a bubblewrap sandbox on a fresh workdir; without bubblewrap
// the test fails under CI and is skipped elsewhere.
func newBwrap(t *testing.T, cfg Config) (*Sandbox, string) {
	t.Helper()
	wd := t.TempDir()
	cfg.Mode = ModeBwrap
	s, err := New(cfg, wd)
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(s.Close)
	require.Equal(t, ModeBwrap, s.Mode())
	return s, wd
}

type outcome struct {
	out  string
	code int
	cut  []string
}

func run(t *testing.T, s *Sandbox, wd, script string, env ...string) outcome {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = wd
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := s.Wrap(cmd)
	require.NoError(t, err)
	require.NoError(t, p.Start())
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return outcome{out: out.String(), code: code, cut: p.Finish()}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{EnvMode: "bwrap", EnvNetwork: "host", EnvCPU: "10", EnvMemory: "512", EnvProcs: "unlimited", EnvReadOnly: "/opt:/srv/x/"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, Config{Mode: ModeBwrap, Network: NetworkHost, CPUSeconds: 10, MemoryBytes: 512 << 20, MaxProcs: -1, ReadOnly: []string{"/opt", "/srv/x"}}, c)

	for k, v := range map[string]string{EnvMode: "docker", EnvNetwork: "bridge", EnvCPU: "0", EnvMemory: "-5", EnvProcs: "many", EnvReadOnly: "opt"} {
		_, err := ConfigFromEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		require.Error(t, err, "%s=%s", k, v)
		require.Contains(t, err.Error(), k)
	}
}

func TestNoneRunsUnchanged(t *testing.T) {
	s, err := New(Config{Mode: ModeNone}, t.TempDir())
	require.NoError(t, err)
	require.Equal(t, ModeNone, s.Mode())
	require.Equal(t, "none", s.Label())
	require.False(t, s.Fallback())
	o := run(t, s, t.TempDir(), fmt.Sprintf("test -r /proc/%d/environ && echo visible", os.Getpid()))
	require.Equal(t, "visible\n", o.out)
}

func TestMissingBwrap(t *testing.T) {
	_, err := New(Config{Mode: ModeBwrap, Bwrap: "no-such-bwrap"}, t.TempDir())
	require.ErrorContains(t, err, "SANDBOX=bwrap, but bubblewrap cannot run commands here")
	require.NotContains(t, err.Error(), "\n")

	s, err := New(Config{Mode: ModeAuto, Bwrap: "no-such-bwrap"}, t.TempDir())
	require.NoError(t, err)
	require.Equal(t, ModeNone, s.Mode())
	require.True(t, s.Fallback())
	require.Contains(t, s.Reason(), "UNCONFINED")
}

func TestBwrapConfines(t *testing.T) {
	outside := t.TempDir()
	key := filepath.Join(outside, "worker.key")
	require.NoError(t, os.WriteFile(key, []byte("k"), 0o600))
	s, wd := newBwrap(t, Config{Hide: []string{key}})
	require.NoError(t, os.WriteFile(filepath.Join(wd, ".toolround", "state"), []byte("v"), 0o644))

	o := run(t, s, wd, "echo in > inside.txt && cat inside.txt")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "in\n", o.out)

	checks := map[string]string{
		"write outside":     "echo x > " + filepath.Join(outside, "escaped"),
		"write etc":         "echo x > /etc/escaped",
		"write reserved":    "echo x > .toolround/state",
		"new reserved file": "echo x > .toolround/new",
		"remove reserved":   "rm -rf .toolround",
		"worker environ":    fmt.Sprintf("cat /proc/%d/environ", os.Getpid()),
		"shadow":            "cat /etc/shadow",
		"loopback":          "bash -c 'exec 3<>/dev/tcp/127.0.0.1/6379'",
	}
	for name, script := range checks {
		o := run(t, s, wd, script)
		require.NotEqual(t, 0, o.code, "%s succeeded: %s", name, o.out)
	}
	o = run(t, s, wd, "cat .toolround/state; ls -A ~ | wc -l; echo t > /tmp/t && cat /tmp/t")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "v0\nt\n", strings.ReplaceAll(o.out, "\n0\n", "0\n"))
	_, err := os.Stat(filepath.Join(outside, "escaped"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestBwrapEndsLeftoverProcesses(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	args := fmt.Sprintf("sleep %d", 100000+os.Getpid())
	// Each leftover runs before the command returns.
	o := run(t, s, wd, "setsid sh -c 'touch s1; exec "+args+"' >/dev/null 2>&1 </dev/null & "+
		"nohup sh -c 'touch s2; exec "+args+"' >/dev/null 2>&1 </dev/null & "+
		"(sh -c 'touch s3; exec "+args+"' >/dev/null 2>&1 </dev/null &) ; "+
		"until [ -e s1 ] && [ -e s2 ] && [ -e s3 ] && [ $(ps -eo args | grep -cx '"+args+"') = 3 ]; do sleep 0.01; done; echo started")
	require.Equal(t, "started\n", o.out)
	// The namespace ended with the shell: none of them runs on.
	out, _ := exec.Command("sh", "-c", "ps -eo args | grep -cx '"+args+"'").Output()
	require.Equal(t, "0\n", string(out))
}

func TestBwrapLimits(t *testing.T) {
	s, wd := newBwrap(t, Config{MaxProcs: 20, MemoryBytes: 64 << 20, CPUSeconds: 1, FileSizeBytes: 1 << 20})
	switch {
	case s.pids != nil:
		o := run(t, s, wd, "for i in $(seq 40); do sleep 5 & done; wait")
		require.NotEmpty(t, o.cut, o.out)
		require.Contains(t, o.cut[0], "cut by the process limit")
	case s.hasRlimit(rlimitNproc):
		// RLIMIT_NPROC (a worker that is not root, without a pids cgroup):
		// the forks past the limit fail; no cgroup counts them.
		// dash gives up at the first fork that fails; the files say how many ran.
		run(t, s, wd, "for i in $(seq 40); do (touch f.$i; sleep 2) & done; wait")
		started, err := filepath.Glob(filepath.Join(wd, "f.*"))
		require.NoError(t, err)
		require.NotEmpty(t, started)
		require.Less(t, len(started), 40, "every process started")
	default:
		t.Log("no process limit here:", s.Warnings())
	}
	o := run(t, s, wd, "head -c 3000000 /dev/zero > big")
	require.Equal(t, 128+int(syscall.SIGXFSZ), o.code, o.out)
	require.Contains(t, strings.Join(o.cut, "\n"), "cut by the file size limit")

	o = run(t, s, wd, "exec sh -c 'while :; do :; done'")
	require.Equal(t, 128+int(syscall.SIGXCPU), o.code, o.out)
	require.Contains(t, strings.Join(o.cut, "\n"), "cut by the CPU time limit")

	if s.memory != nil {
		o = run(t, s, wd, "x=$(head -c 100000000 /dev/zero | tr '\\0' a); echo ${#x}")
		require.NotEqual(t, 0, o.code, o.out)
		require.Contains(t, strings.Join(o.cut, "\n"), "cut by the memory limit")
	}
}
