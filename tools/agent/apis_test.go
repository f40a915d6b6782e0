package agent

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestPublicAPIData(t *testing.T) {
	l, err := loadAPIs()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(l.apis), 30)
	keyless, keyed := 0, 0
	for _, a := range l.apis {
		for _, raw := range []string{a.BaseURL, a.DocsURL} {
			u, err := url.Parse(raw)
			require.NoError(t, err, a.Name)
			require.Contains(t, []string{"http", "https"}, u.Scheme, a.Name)
			require.NotEmpty(t, u.Host, a.Name)
		}
		if a.Auth == "none" {
			keyless++
		} else {
			keyed++
		}
	}
	require.GreaterOrEqual(t, keyless, 15)
	require.GreaterOrEqual(t, keyed, 10)
}

func TestPublicAPIList(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name, args string
		first      string // the best match comes first
		contains   []string
		excludes   []string
	}{
		{name: "query", args: `{"query":"exchange rates"}`, first: "Frankfurter",
			contains: []string{"base: https://api.frankfurter.app", "docs: https://www.frankfurter.app/docs/", "auth: none", "example: GET /latest"}},
		{name: "query by name", args: `{"query":"open-meteo"}`, first: "Open-Meteo"},
		{name: "category", args: `{"category":"weather"}`, contains: []string{"Open-Meteo", "OpenWeatherMap", "auth: api_key_query (query parameter appid)"}, excludes: []string{"Frankfurter"}},
		{name: "category is case-insensitive", args: `{"category":"Weather"}`, contains: []string{"Open-Meteo"}},
		{name: "query within category", args: `{"query":"key","category":"news"}`, contains: []string{"NewsAPI"}, excludes: []string{"Open-Meteo"}},
		{name: "everything", args: `{}`, contains: []string{"Open-Meteo", "Stripe", "Hacker News"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.mustCall(t, "public_api_list", tools.Request{}, tt.args)
			require.Contains(t, got, "http_request")
			require.Contains(t, got, "store_secret")
			if tt.first != "" {
				entries := strings.Split(got, "\n\n")
				require.True(t, strings.HasPrefix(entries[1], tt.first+" ["), "first entry is %q", entries[1])
			}
			for _, s := range tt.contains {
				require.Contains(t, got, s)
			}
			for _, s := range tt.excludes {
				require.NotContains(t, got, s)
			}
		})
	}

	got := e.mustCall(t, "public_api_list", tools.Request{}, `{"query":"xylophone quantum"}`)
	require.Contains(t, got, "no public API matches")
	require.Contains(t, got, "weather")

	_, err := e.call(t, "public_api_list", tools.Request{}, `{"category":"astrology"}`)
	require.ErrorContains(t, err, `no category "astrology"`)
	require.ErrorContains(t, err, "finance")
}
