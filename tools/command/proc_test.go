package command

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools/command/sandbox"
)

// TestOutcomeNamesOnlyRealSignals: an exit code above 128 is an exit code,
// in the sandbox too, unless the signal it stands for was sent to the
// process or a limit cut it.
func TestOutcomeNamesOnlyRealSignals(t *testing.T) {
	keepHangups() // as New does: SIGHUP at its default, under nohup too
	ended := func(script string) *process {
		cmd := exec.Command("/bin/sh", "-c", script)
		_ = cmd.Run()
		p := &process{state: cmd.ProcessState, exited: make(chan struct{})}
		return p
	}
	cases := []struct {
		name, script string
		sandboxed    bool
		sent         syscall.Signal
		cut          []string
		how          string
		code         int
		sig          string
	}{
		{"exit 129 on the host", "exit 129", false, 0, nil, "exit code 129", 129, ""},
		{"exit 129 in the sandbox", "exit 129", true, 0, nil, "exit code 129", 129, ""},
		{"exit 137 in the sandbox", "exit 137", true, 0, nil, "exit code 137", 137, ""},
		{"exit 143 after another signal", "exit 143", true, syscall.SIGHUP, nil, "exit code 143", 143, ""},
		{"SIGTERM sent in the sandbox", "exit 143", true, syscall.SIGTERM, nil, "exit code 143 (killed by signal SIGTERM inside the sandbox)", 143, ""},
		{"a limit cut it", "exit 137", true, 0, []string{"memory limit"}, "exit code 137 (killed by signal SIGKILL inside the sandbox)", 137, ""},
		{"killed on the host", "kill -HUP $$", false, 0, nil, "killed by signal SIGHUP", -1, "SIGHUP"},
		{"exit 0", "true", true, 0, nil, "exit code 0", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ended(c.script)
			p.sandboxed, p.cut = c.sandboxed, c.cut
			if c.sent != 0 {
				p.sent.Or(1 << uint(c.sent))
			}
			how, code, sig := p.outcome()
			require.Equal(t, c.how, how)
			require.Equal(t, c.code, code)
			require.Equal(t, c.sig, sig)
		})
	}
}

// TestSignalAfterExitIsNotRecorded: ending what a shell left behind after
// it was reaped does not make its exit code a signal.
func TestSignalAfterExitIsNotRecorded(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 143")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	_ = cmd.Wait()
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, state: cmd.ProcessState, exited: make(chan struct{}), sandboxed: true, sp: &sandbox.Proc{}}
	close(p.exited)
	p.signal(syscall.SIGTERM)
	how, code, _ := p.outcome()
	require.Equal(t, "exit code 143", how)
	require.Equal(t, 143, code)
}
