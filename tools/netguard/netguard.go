// Package netguard decides which network addresses the HTTP tools may reach.
// Loopback and private addresses are allowed unless configuration denies
// them; the metadata services of the major clouds are denied by default.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy is the set of addresses the HTTP tools may not reach.
type Policy struct {
	// DenyPrivate refuses loopback, private, link-local and unique-local addresses.
	DenyPrivate bool
	// Deny lists more refused prefixes. DefaultPolicy denies the metadata
	// addresses of the major clouds (MetadataPrefixes).
	Deny []netip.Prefix
	// DenyNames lists host names refused as written (any letter case, with
	// or without a trailing dot), before a resolver reads them: a name that
	// resolves to a denied address is refused after resolution anyway.
	// DefaultPolicy denies MetadataNames.
	DenyNames []string
}

// MetadataPrefixes are the addresses of cloud metadata services: the
// instance metadata of AWS, GCP, Azure and Oracle (169.254.169.254), AWS's
// over IPv6 (fd00:ec2::254), ECS task metadata and credentials
// (169.254.170.2), EKS Pod Identity (169.254.170.23, fd00:ec2::23), GCP's
// over IPv6 (fd20:ce::254), Azure's WireServer (168.63.129.16), Alibaba
// Cloud's (100.100.100.200) and Oracle Cloud's other (192.0.0.192).
var MetadataPrefixes = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"),
	netip.MustParsePrefix("169.254.170.2/32"),
	netip.MustParsePrefix("169.254.170.23/32"),
	netip.MustParsePrefix("168.63.129.16/32"),
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("192.0.0.192/32"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
	netip.MustParsePrefix("fd00:ec2::23/128"),
	netip.MustParsePrefix("fd20:ce::254/128"),
}

// MetadataNames are the host names of cloud metadata services (GCP's, and
// AWS's instance-data).
var MetadataNames = []string{
	"metadata.google.internal", "metadata.goog", "metadata",
	"instance-data", "instance-data.ec2.internal",
}

// DefaultPolicy allows everything but the cloud metadata services.
func DefaultPolicy() Policy {
	return Policy{Deny: slices.Clone(MetadataPrefixes), DenyNames: slices.Clone(MetadataNames)}
}

// Check reports why an address is refused, or nil. The address is judged
// without its IPv6 zone, and an IPv4 address inside an IPv6 one (mapped,
// compatible or NAT64) is judged as that IPv4 address.
func (p Policy) Check(addr netip.Addr) error {
	addr = Canonical(addr)
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

// nat64 is the well-known NAT64 prefix: 64:ff9b::a.b.c.d reaches a.b.c.d.
// sixToFour is 6to4's: 2002:AABB:CCDD::/48 is the network of a relay that
// reaches AA.BB.CC.DD.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Canonical drops the zone of addr and turns an IPv4 address written as
// IPv6 (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d, 2002:AABB:CCDD::...)
// into that IPv4 address.
func Canonical(addr netip.Addr) netip.Addr {
	addr = addr.WithZone("").Unmap()
	if !addr.Is6() {
		return addr
	}
	b := addr.As16()
	v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	compatible := true
	for _, x := range b[:12] {
		compatible = compatible && x == 0
	}
	// ::a.b.c.d, but not :: and ::1, which are IPv6's own.
	if compatible && b[12]|b[13] != 0 {
		return v4
	}
	if nat64.Contains(addr) {
		return v4
	}
	if sixToFour.Contains(addr) {
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return addr
}

// ParseHost reads the host of a URL or of a host:port as an address in
// every spelling a resolver or the C library would accept: IPv6 in brackets
// or not, with a zone ("%eth0", or "%25eth0" as URLs escape it), and IPv4
// with one to four parts, each decimal, octal (leading 0) or hexadecimal
// (0x), as inet_aton reads them ("2852039166", "0xa9fea9fe",
// "0251.0376.0251.0376", "169.254.43518"), with or without a trailing dot.
// ok is false for a name.
func ParseHost(host string) (addr netip.Addr, ok bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // the zone, escaped or not, says nothing about where it goes
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseInetAton(h)
}

// parseInetAton reads IPv4 the way inet_aton does.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0" // "0x" alone is 0 to inet_aton
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" || strings.ContainsAny(digits, "+-_") {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// Every part but the last is one byte; the last fills the rest.
	n := len(vals)
	for _, v := range vals[:n-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
	}
	last := vals[n-1]
	if last >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, v := range vals[:n-1] {
		b[i] = byte(v)
	}
	for i := 3; i >= n-1; i-- {
		b[i] = byte(last)
		last >>= 8
	}
	return netip.AddrFrom4(b), true
}

// CheckHost refuses a host that is a denied address in any spelling
// ParseHost reads, and a name DenyNames lists, before it is resolved or
// dialled. Other names pass: the dialer checks the addresses they resolve
// to.
func (p Policy) CheckHost(host string) error {
	a, ok := ParseHost(host)
	if !ok {
		name := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
		if slices.ContainsFunc(p.DenyNames, func(d string) bool { return strings.EqualFold(strings.TrimSuffix(d, "."), name) }) {
			return fmt.Errorf("host %q is denied by the network policy", host)
		}
		return nil
	}
	err := p.Check(a)
	if err != nil && strings.Trim(host, "[]") != Canonical(a).String() {
		// Say how an unusual spelling was read.
		return fmt.Errorf("host %q: %w", host, err)
	}
	return err
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
	t, ok := http.DefaultTransport.(*http.Transport)
	if ok {
		t = t.Clone()
	} else {
		// A program that wrapped http.DefaultTransport still gets a
		// guarded transport with the standard settings.
		t = &http.Transport{ForceAttemptHTTP2: true, MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second, ExpectContinueTimeout: time.Second}
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		// The host as written, before a resolver reads it its own way.
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		if err := p.CheckHost(host); err != nil {
			return nil, fmt.Errorf("netguard: %w", err)
		}
		return p.Dialer().DialContext(ctx, network, addr)
	}
	t.Proxy = nil // a proxy would hide the real destination from the policy
	return t
}
