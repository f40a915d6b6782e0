package netguard

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cloudMetadata are the metadata endpoints of the major clouds.
var cloudMetadata = []struct{ cloud, addr string }{
	{"AWS, GCP, Azure, Oracle instance metadata", "169.254.169.254"},
	{"AWS instance metadata over IPv6", "fd00:ec2::254"},
	{"AWS ECS task metadata and credentials", "169.254.170.2"},
	{"AWS EKS Pod Identity", "169.254.170.23"},
	{"AWS EKS Pod Identity over IPv6", "fd00:ec2::23"},
	{"GCP metadata over IPv6", "fd20:ce::254"},
	{"Azure WireServer", "168.63.129.16"},
	{"Alibaba Cloud metadata", "100.100.100.200"},
	{"Oracle Cloud metadata", "192.0.0.192"},
}

// spellings4 writes an IPv4 address in every form ParseHost reads: inet_aton's
// numbers and parts, IPv6 embeddings (mapped, compatible, NAT64, 6to4), zones.
func spellings4(a netip.Addr) []string {
	b := a.As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	dotted := a.String()
	h := fmt.Sprintf("%02x%02x:%02x%02x", b[0], b[1], b[2], b[3])
	return []string{
		dotted, dotted + ".", "[" + dotted + "]",
		fmt.Sprint(n), fmt.Sprintf("0x%x", n), fmt.Sprintf("0X%X", n), fmt.Sprintf("0%o", n),
		fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("0x0%x.%d.0%o.%d", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("%d.%d.%d", b[0], b[1], uint32(b[2])<<8|uint32(b[3])),
		fmt.Sprintf("%d.%d.0x%x", b[0], b[1], uint32(b[2])<<8|uint32(b[3])),
		fmt.Sprintf("%d.%d", b[0], n&0xffffff),
		fmt.Sprintf("0%o.0%o", b[0], n&0xffffff),
		"::ffff:" + dotted, "[::ffff:" + h + "]", "::FFFF:" + strings.ToUpper(h),
		"0:0:0:0:0:ffff:" + h, "::ffff:" + dotted + "%eth0", "[::ffff:" + h + "%25eth0]",
		"::" + dotted, "[::" + h + "]",
		"64:ff9b::" + dotted, "64:ff9b::" + h, "[64:FF9B::" + h + "%25lo]",
		"2002:" + h + "::", "2002:" + h + ":1:2:3:4:5", "[2002:" + h + "::1%25eth0]",
	}
}

// spellings6 writes an IPv6 address expanded, compressed, in either case,
// with and without brackets and zones.
func spellings6(a netip.Addr) []string {
	s := a.String()
	full := a.StringExpanded()
	return []string{
		s, "[" + s + "]", strings.ToUpper(s), full, strings.ToUpper(full),
		strings.ReplaceAll(full, ":0000", ":0"),
		s + "%eth0", "[" + s + "%eth0]", "[" + s + "%25eth0]", "[" + strings.ToUpper(full) + "%251]",
	}
}

func TestDefaultPolicyDeniesEveryCloudMetadataEndpoint(t *testing.T) {
	p := DefaultPolicy()
	for _, m := range cloudMetadata {
		a := netip.MustParseAddr(m.addr)
		spellings := spellings6(a)
		if a.Is4() {
			spellings = spellings4(a)
		}
		for _, h := range spellings {
			t.Run(m.addr+"/"+h, func(t *testing.T) {
				got, ok := ParseHost(h)
				require.True(t, ok, "%q is not read as an address", h)
				require.Equal(t, a, Canonical(got), "%q", h)
				require.ErrorContains(t, p.CheckHost(h), "denied by the network policy", "%s: %q", m.cloud, h)
				require.ErrorContains(t, p.Check(got), "denied by the network policy")
			})
		}
	}
}

// The names of metadata services are refused as written, before a
// resolver reads them.
func TestDefaultPolicyDeniesMetadataNames(t *testing.T) {
	p := DefaultPolicy()
	for _, h := range []string{"metadata.google.internal", "metadata.google.internal.", "METADATA.Google.Internal",
		"metadata", "metadata.goog", "instance-data", "instance-data.ec2.internal", "[metadata.google.internal]"} {
		require.ErrorContains(t, p.CheckHost(h), "denied by the network policy", h)
	}
	for _, h := range []string{"metadata.example.com", "google.internal", "my-metadata", "metadata.google.internal.example"} {
		require.NoError(t, p.CheckHost(h), h)
	}
}

// Neighbours of the metadata addresses, and 6to4 and NAT64 forms of other
// addresses, stay allowed.
func TestDefaultPolicyAllowsTheNeighbours(t *testing.T) {
	p := DefaultPolicy()
	for _, h := range []string{"169.254.170.3", "169.254.170.22", "168.63.129.17", "100.100.100.201", "192.0.0.193",
		"fd00:ec2::22", "fd20:ce::253", "2002:0102:0304::", "64:ff9b::0102:0304", "2002::1"} {
		require.NoError(t, p.CheckHost(h), h)
	}
	// 6to4 of a private address is private.
	require.Error(t, Policy{DenyPrivate: true}.CheckHost("2002:0a00:0001::"))
}
