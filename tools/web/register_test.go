package web

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestRegister(t *testing.T) {
	reg := tools.NewRegistry()
	require.NoError(t, Register(reg, Config{Timeout: 10 * time.Second}))
	require.Equal(t, []string{"fetch_page", "http_request", "search_web"}, reg.Names())
	for _, name := range reg.Names() {
		d, _ := reg.Lookup(name)
		require.True(t, d.Concurrent, name)
		require.True(t, slices.Contains(tools.ConcurrentBuiltins, name), name)
		require.Equal(t, tools.SourceBuiltin, d.Source, name)
		require.NotEmpty(t, d.Description, name)
		require.Greater(t, d.Timeout, 10*time.Second, name)
		require.NotNil(t, d.Subject, name)
	}
	hr, _ := reg.Lookup("http_request")
	require.Equal(t, tools.AtMostOnce, hr.SideEffect)
	require.NotNil(t, hr.Effect)
	for _, name := range []string{"fetch_page", "search_web"} {
		d, _ := reg.Lookup(name)
		require.Equal(t, tools.ReadOnly, d.SideEffect, name)
	}

	require.ErrorContains(t, Register(reg, Config{}), "already registered")
	require.ErrorContains(t, Register(tools.NewRegistry(), Config{SearXNGURL: "nope"}), "web: searxng: base URL")
}

func TestSchemas(t *testing.T) {
	defs := toolSet(t, Config{})
	tests := []struct {
		tool, args string
		ok         bool
	}{
		{"http_request", `{"url":"https://x"}`, true},
		{"http_request", `{"url":"https://x","method":"post","headers":{"A":"b"},"body":"x"}`, true},
		{"http_request", `{}`, false},
		{"http_request", `{"url":"https://x","headers":{"A":1}}`, false},
		{"http_request", `{"url":"https://x","method":"G ET"}`, false},
		{"http_request", `{"url":"https://x","extra":true}`, false},
		{"fetch_page", `{"url":"https://x","query":"q"}`, true},
		{"fetch_page", `{"query":"q"}`, false},
		{"search_web", `{"query":"q"}`, true},
		{"search_web", `{"query":""}`, false},
		{"search_web", `{"q":"x"}`, false},
	}
	for _, tt := range tests {
		d := defs[tt.tool]
		_, err := tools.CompileSchema(d.Parameters)
		require.NoError(t, err)
		errs := tools.Validate(d.Parameters, json.RawMessage(tt.args))
		require.Equal(t, tt.ok, len(errs) == 0, "%s %s: %v", tt.tool, tt.args, errs)
	}
}
