package web

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDescribeNamesTheAddress: a failed exchange says which host could not
// be resolved and which address could not be reached, and why.
func TestDescribeNamesTheAddress(t *testing.T) {
	c := &client{timeout: time.Second}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Get", URL: "http://x/", Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr,
			Err: &os.SyscallError{Syscall: "connect", Err: errno}}}
	}
	cases := []struct {
		name      string
		err       error
		want      string
		transient bool
	}{
		{"no such host", &url.Error{Op: "Get", URL: "http://nosuch.invalid/", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "nosuch.invalid", IsNotFound: true}}},
			`cannot resolve host "nosuch.invalid": no such host`, false},
		{"resolver fails", &net.DNSError{Err: "server misbehaving", Name: "example.org", IsTemporary: true},
			`cannot resolve host "example.org": server misbehaving`, true},
		{"refused", dial(syscall.ECONNREFUSED), "cannot connect to 127.0.0.1:9: connection refused", true},
		{"unreachable", dial(syscall.ENETUNREACH), "cannot connect to 127.0.0.1:9: network is unreachable", true},
		{"refused without an address", syscall.ECONNREFUSED, "cannot connect to the server: connection refused", true},
		{"other", errors.New("unexpected EOF"), "unexpected EOF", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, transient := c.describe(context.Background(), tc.err)
			require.Equal(t, tc.want, msg)
			require.Equal(t, tc.transient, transient)
		})
	}
}
