// Package netguard decides which network addresses the HTTP tools may reach.
// Loopback and private addresses are allowed unless configuration denies
// them; the cloud metadata address is denied by default.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Policy is the set of addresses the HTTP tools may not reach.
type Policy struct {
	// DenyPrivate refuses loopback, private, link-local and unique-local addresses.
	DenyPrivate bool
	// Deny lists more refused prefixes. DefaultPolicy denies 169.254.169.254/32
	// and fd00:ec2::254/128 (cloud metadata services).
	Deny []netip.Prefix
}

// DefaultPolicy allows everything but the cloud metadata addresses.
func DefaultPolicy() Policy {
	return Policy{Deny: []netip.Prefix{
		netip.MustParsePrefix("169.254.169.254/32"),
		netip.MustParsePrefix("fd00:ec2::254/128"),
	}}
}

// Check reports why an address is refused, or nil.
func (p Policy) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, d := range p.Deny {
		if d.Contains(addr) {
			return fmt.Errorf("address %s is denied by the network policy", addr)
		}
	}
	if p.DenyPrivate && (addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsUnspecified()) {
		return fmt.Errorf("address %s is private and the network policy denies private addresses", addr)
	}
	return nil
}

// Dialer returns a dialer that checks every address it connects to, after
// DNS resolution, so a host name cannot smuggle a denied address past it.
func (p Policy) Dialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("netguard: %q: %w", address, err)
			}
			return p.Check(ap.Addr())
		},
	}
}

// Transport returns an HTTP transport that dials through Dialer.
func (p Policy) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return p.Dialer().DialContext(ctx, network, addr)
	}
	t.Proxy = nil // a proxy would hide the real destination from the policy
	return t
}
