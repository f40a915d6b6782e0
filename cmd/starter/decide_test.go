package main

import (
	"errors"
	"os/user"
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
