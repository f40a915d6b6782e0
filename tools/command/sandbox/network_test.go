package sandbox

import (
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBwrapNetworkNoneHasNoLoopback: with COMMAND_NETWORK=none a command
// cannot reach a service listening on the worker's loopback, over IPv4 or
// IPv6; with host it can, which shows the check reaches the listener.
func TestBwrapNetworkNoneHasNoLoopback(t *testing.T) {
	var addrs []*net.TCPAddr
	for _, network := range []string{"tcp4", "tcp6"} {
		host := "127.0.0.1"
		if network == "tcp6" {
			host = "::1"
		}
		l, err := net.Listen(network, net.JoinHostPort(host, "0"))
		if err != nil {
			t.Logf("no %s loopback here: %v", network, err)
			continue
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = c.Write([]byte("hello from the worker's loopback\n"))
				_ = c.Close()
			}
		}()
		addrs = append(addrs, l.Addr().(*net.TCPAddr))
	}
	require.NotEmpty(t, addrs, "no loopback listener could be opened")

	none, wdNone := newBwrap(t, Config{})
	host, wdHost := newBwrap(t, Config{Network: NetworkHost})
	for _, a := range addrs {
		script := fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/%s/%d && cat <&3'`, a.IP, a.Port)
		o := run(t, none, wdNone, script)
		require.NotEqual(t, 0, o.code, "COMMAND_NETWORK=none reached %s: %s", a, o.out)
		require.NotContains(t, o.out, "hello from the worker's loopback")

		o = run(t, host, wdHost, script)
		require.Equal(t, 0, o.code, "COMMAND_NETWORK=host did not reach %s: %s", a, o.out)
		require.Contains(t, o.out, "hello from the worker's loopback")
	}
}
