package web

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestParseHostConcurrency(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		per  map[string]int
		fail string
	}{
		{in: ""},
		{in: " 8 ", n: 8},
		{in: "8,API.example.com=2, 127.0.0.1:8080=1", n: 8, per: map[string]int{"api.example.com": 2, "127.0.0.1:8080": 1}},
		{in: "api.example.com=3", per: map[string]int{"api.example.com": 3}},
		{in: "0", fail: "above 0"},
		{in: "-1", fail: "above 0"},
		{in: "x", fail: "HOST=N"},
		{in: "a.example=0", fail: "above 0"},
		{in: "=2", fail: "host name"},
		{in: "http://a.example/=2", fail: "host name"},
		{in: "4,5", fail: "given twice"},
		{in: "a.example=1,A.example=2", fail: "given twice"},
	} {
		n, per, err := ParseHostConcurrency(tc.in)
		if tc.fail != "" {
			require.ErrorContains(t, err, tc.fail, tc.in)
			require.ErrorContains(t, err, EnvHostConcurrency, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.n, n, tc.in)
		require.Equal(t, tc.per, per, tc.in)
	}
}

// The HTTP tools' key limit is HostConcurrency, or the host's own limit:
// with its port first, then its name alone.
func TestHostLimitsOfTheHTTPTools(t *testing.T) {
	defs, err := Definitions(Config{HostConcurrency: 6, HostLimits: map[string]int{"slow.example": 1, "127.0.0.1:8080": 3, "::1": 2}})
	require.NoError(t, err)
	for _, d := range defs {
		if d.ConcurrencyKey == nil {
			continue
		}
		for url, want := range map[string]int{
			"https://fast.example/a":     6,
			"https://SLOW.example/a":     1,
			"https://slow.example:443/a": 1,
			"http://127.0.0.1:8080/x":    3,
			"http://127.0.0.1:9090/x":    6,
			"http://[::1]:8080/x":        2,
		} {
			args := []byte(`{"url":"` + url + `","query":"q"}`)
			key, limit := tools.KeyOf(&d, args)
			require.NotEmpty(t, key, url)
			require.Equal(t, want, limit, "%s %s", d.Name, url)
		}
	}
	defs, err = Definitions(Config{})
	require.NoError(t, err)
	_, limit := tools.KeyOf(&defs[0], []byte(`{"url":"https://a.example/"}`))
	require.Equal(t, tools.HostKeyLimit, limit, "the default without a worker's bound")
	_, err = Definitions(Config{HostLimits: map[string]int{"a.example": 0}})
	require.Error(t, err)
}
