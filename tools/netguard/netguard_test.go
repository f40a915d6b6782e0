package netguard

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// metadataSpellings are ways to write 169.254.169.254 and fd00:ec2::254.
var metadataSpellings = []string{
	"169.254.169.254",
	"169.254.169.254.",
	"[169.254.169.254]",
	"2852039166",             // one decimal number
	"0xa9fea9fe",             // one hexadecimal number
	"0XA9FEA9FE",             //
	"025177524776",           // one octal number
	"0251.0376.0251.0376",    // octal parts
	"0xa9.0xfe.0xa9.0xfe",    // hexadecimal parts
	"0xa9.254.0251.254",      // mixed
	"169.254.43518",          // a.b.c, the last part two bytes
	"169.16689662",           // a.b, the last part three bytes
	"0251.0xfe.43518",        //
	"0x0a9.0x0fe.0x0a9.0xfe", // leading zeros after 0x
	"::ffff:169.254.169.254", // IPv4-mapped
	"[::ffff:a9fe:a9fe]",     //
	"::169.254.169.254",      // IPv4-compatible
	"64:ff9b::a9fe:a9fe",     // NAT64
	"fd00:ec2::254",
	"[fd00:ec2::254]",
	"FD00:EC2::254",
	"fd00:ec2:0:0:0:0:0:254",
	"fd00:0ec2:0000::0254",
	"fd00:ec2::254%eth0",     // with a zone
	"[fd00:ec2::254%eth0]",   //
	"[fd00:ec2::254%25eth0]", // the zone as URLs escape it
	"fe80::1%eth0",           // not metadata: checked below with DenyPrivate
}

func TestCheckHostRefusesEverySpellingOfMetadata(t *testing.T) {
	p := DefaultPolicy()
	for _, h := range metadataSpellings[:len(metadataSpellings)-1] {
		t.Run(h, func(t *testing.T) {
			a, ok := ParseHost(h)
			require.True(t, ok, "%q is not read as an address", h)
			require.Error(t, p.Check(a), "%q (%s) is not denied", h, a)
			require.ErrorContains(t, p.CheckHost(h), "denied by the network policy")
		})
	}
	// A link-local address with a zone is private.
	require.ErrorContains(t, Policy{DenyPrivate: true}.CheckHost("fe80::1%eth0"), "private")
	require.NoError(t, p.CheckHost("fe80::1%eth0"))
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		host string
		want string // "" for a name
	}{
		{"example.com", ""},
		{"cafe", ""},
		{"1e3", ""},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"08.1.1.1", ""}, // 8 is no octal digit
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"1.16777216", ""},
		{"4294967296", ""},
		{"0x", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"127.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"10.0.0.1", "10.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"[::1]", "::1"},
		{"1.2.3.4.", "1.2.3.4"},
	}
	for _, tt := range tests {
		a, ok := ParseHost(tt.host)
		if tt.want == "" {
			require.False(t, ok, "%q read as %s", tt.host, a)
			continue
		}
		require.True(t, ok, tt.host)
		require.Equal(t, tt.want, a.String(), tt.host)
	}
}

func TestCheckAllows(t *testing.T) {
	p := DefaultPolicy()
	for _, h := range []string{"example.com", "169.254.169.253", "169.254.169.255", "1.2.3.4", "127.0.0.1", "10.1.2.3",
		"fd00:ec2::253", "::", "::1", "64:ff9b::1.2.3.4", "2852039165"} {
		require.NoError(t, p.CheckHost(h), h)
	}
	deny := Policy{DenyPrivate: true}
	for _, h := range []string{"127.1", "0x7f000001", "::ffff:127.0.0.1", "10.0.0.1", "[fe80::1%25eth0]", "0.0.0.0", "::"} {
		require.Error(t, deny.CheckHost(h), h)
	}
}

// TestTransportRefusesBeforeAnyConnection sends requests to metadata
// spellings through the policy's transport: each is refused by the check of
// the host as written (its error names the host), before a resolver or the
// dialer sees it.
func TestTransportRefusesBeforeAnyConnection(t *testing.T) {
	client := &http.Client{Transport: DefaultPolicy().Transport(), Timeout: 5 * time.Second}
	for _, h := range []string{"2852039166", "0xa9fea9fe", "169.254.43518", "0251.0376.0251.0376", "[fd00:ec2::254%25eth0]", "[::ffff:169.254.169.254]"} {
		u := "http://" + h + "/latest/meta-data/"
		_, err := client.Get(u)
		require.ErrorContains(t, err, "netguard: host ", u)
		require.ErrorContains(t, err, "denied by the network policy", u)
	}
	// The dialer's own check, after resolution, strips zones too.
	err := DefaultPolicy().Dialer().Control("tcp6", "[fd00:ec2::254%eth0]:80", nil)
	require.ErrorContains(t, err, "denied by the network policy")
	require.Error(t, DefaultPolicy().Check(netip.MustParseAddr("fd00:ec2::254%eth0")))
}

type wrapped struct{ http.RoundTripper }

// A program that wrapped http.DefaultTransport still gets a guarded
// transport, not a panic.
func TestTransportWhenTheDefaultIsWrapped(t *testing.T) {
	saved := http.DefaultTransport
	http.DefaultTransport = wrapped{saved}
	t.Cleanup(func() { http.DefaultTransport = saved })
	tr := DefaultPolicy().Transport()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	_, err := c.Get("http://169.254.169.254/latest/meta-data/")
	require.ErrorContains(t, err, "netguard")
	require.Nil(t, tr.Proxy)
}
