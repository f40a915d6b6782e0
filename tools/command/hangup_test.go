package command

import (
	"context"
	"errors"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// TestHangupEndsACommandOfAWorkerThatIgnoresIt: a worker started with
// SIGHUP ignored (under nohup) still runs its commands with SIGHUP at its
// default, so a hangup ends a command and its outcome names it, while the
// worker itself goes on ignoring it.
func TestHangupEndsACommandOfAWorkerThatIgnoresIt(t *testing.T) {
	// As nohup starts a worker. The catch keepHangups installs stays
	// after the test, as it would in the worker: the other tests' commands
	// start with SIGHUP at its default too.
	signal.Ignore(syscall.SIGHUP)
	hangups = sync.Once{}
	tl, _ := newTools(t, nil)
	_, err := call(context.Background(), tools.Typed(tl.runCommand), cmdArgs(t, map[string]any{"command": "kill -HUP $$; echo still here"}))
	var exit *ExitError
	require.True(t, errors.As(err, &exit), "a command that ignored its hangup: %v", err)
	require.Contains(t, err.Error(), "killed by signal SIGHUP")
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGHUP), "the worker goes on ignoring it")
}
