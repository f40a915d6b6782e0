package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/user"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDefaultDeciderIsTheOSUser: approving without --as records the OS user
// at the host name, from the user database, else $USER or $LOGNAME; never
// "unknown" while any of them knows (T2).
func TestDefaultDeciderIsTheOSUser(t *testing.T) {
	noUser := func() (*user.User, error) { return nil, errors.New("user: unknown userid 1000") }
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	host := func() (string, error) { return "vm", nil }
	for name, c := range map[string]struct {
		current  func() (*user.User, error)
		getenv   func(string) string
		hostname func() (string, error)
		want     string
	}{
		"user database": {func() (*user.User, error) { return &user.User{Username: "ada", Uid: "1000"}, nil }, env(map[string]string{"USER": "other"}), host, "ada@vm"},
		"USER":          {noUser, env(map[string]string{"USER": "ada", "LOGNAME": "other"}), host, "ada@vm"},
		"LOGNAME":       {noUser, env(map[string]string{"LOGNAME": "ada"}), host, "ada@vm"},
		"no host":       {noUser, env(map[string]string{"USER": "ada"}), func() (string, error) { return "", errors.New("no") }, "ada"},
	} {
		require.Equal(t, c.want, decider(c.current, c.getenv, c.hostname, 1000), name)
	}
	require.Equal(t, "uid 1000@vm", decider(noUser, env(nil), host, 1000), "the uid when nothing names the user")
}

// TestApproveSaysARuleRunsWorkspaceCode (T11): remembering a pattern over a
// program that runs the workspace's code prints a notice first; without a
// terminal it needs --yes (exit 2, nothing decided), on a terminal it asks
// y/N. Other patterns go on without a word.
func TestApproveSaysARuleRunsWorkspaceCode(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"approve", "--remember", "--pattern", "python3 *", "wf", "call_1"}, strings.NewReader(""), io.Discard, &stderr)
	require.Error(t, err)
	require.Equal(t, exitUsage, report(err, io.Discard))
	require.Contains(t, err.Error(), "--yes")
	require.Contains(t, stderr.String(), "python3 runs the workspace's code")

	f := flags{remember: true, pattern: "make *"}
	stderr.Reset()
	require.Error(t, consentToWorkspaceCode(f, strings.NewReader("y\n"), &stderr, false))
	f.yes = true
	stderr.Reset()
	require.NoError(t, consentToWorkspaceCode(f, strings.NewReader(""), &stderr, false))
	require.Contains(t, stderr.String(), "make runs the workspace's code")
	f.yes = false
	for answer, ok := range map[string]bool{"y\n": true, "yes\n": true, "Y\n": true, "\n": false, "n\n": false, "": false} {
		stderr.Reset()
		err := consentToWorkspaceCode(f, strings.NewReader(answer), &stderr, true)
		require.Equal(t, ok, err == nil, "%q: %v", answer, err)
		require.Contains(t, stderr.String(), "[y/N]", answer)
	}
	for _, f := range []flags{{remember: true, pattern: "git *"}, {remember: true}, {pattern: "python3 *"}, {remember: true, pattern: "bash"}} {
		stderr.Reset()
		require.NoError(t, consentToWorkspaceCode(f, strings.NewReader(""), &stderr, false))
		require.Empty(t, stderr.String())
	}
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	require.False(t, isTerminal(null), "/dev/null is no terminal")
}
