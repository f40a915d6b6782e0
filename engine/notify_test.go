package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/notify"
)

// TestWebhooksWithoutDecisionLinksAreSaid: a worker whose webhooks would go
// out without approve and deny links says so at start, in one line that
// names the missing piece (N1, N2).
func TestWebhooksWithoutDecisionLinksAreSaid(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte(strings.Repeat("a", 32)+" alice approver\n"+strings.Repeat("b", 32)+" bot agent\n"), 0o600))
	keyFile := filepath.Join(dir, "link.key")
	base := func() Config {
		return Config{
			Notify:        notify.Config{URLs: []string{"https://hooks.example/x"}, Format: "json", ConsoleURL: "https://console.example", Approver: "alice"},
			ConsoleTokens: tokens,
			LinkKey:       notify.LinkKeyConfig{KeyFile: keyFile},
		}
	}
	for name, c := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no CONSOLE_URL":     {func(c *Config) { c.Notify.ConsoleURL = "" }, "CONSOLE_URL is not set"},
		"no NOTIFY_APPROVER": {func(c *Config) { c.Notify.Approver = "" }, "NOTIFY_APPROVER is not set"},
		"no CONSOLE_TOKENS":  {func(c *Config) { c.ConsoleTokens = "" }, "CONSOLE_TOKENS is not set"},
		"no such token":      {func(c *Config) { c.Notify.Approver = "alicia" }, `no approver token named "alicia"`},
		"not an approver":    {func(c *Config) { c.Notify.Approver = "bot" }, `"bot" is an agent token`},
	} {
		cfg := base()
		c.edit(&cfg)
		n, missing, err := newNotifier(cfg)
		require.NoError(t, err, name)
		require.NotNil(t, n, name)
		require.Contains(t, missing, "webhooks go out without approve and deny links", name)
		require.Contains(t, missing, c.want, name)
		require.NotContains(t, missing, "\n", name)
	}
	n, missing, err := newNotifier(base())
	require.NoError(t, err)
	require.Empty(t, missing, "links are minted")
	require.NotNil(t, n.Config.LinkKey)

	cfg := base()
	cfg.Notify.URLs = nil
	n, missing, err = newNotifier(cfg)
	require.NoError(t, err)
	require.Nil(t, n)
	require.Empty(t, missing, "no webhooks, nothing to say")
}

// TestSlackWebhooksNeedOnlyTheConsoleURL: Slack bodies carry no approve or
// deny link by design, so only a missing CONSOLE_URL is said.
func TestSlackWebhooksNeedOnlyTheConsoleURL(t *testing.T) {
	cfg := Config{Notify: notify.Config{URLs: []string{"https://hooks.slack.example/x"}, Format: "slack", ConsoleURL: "https://console.example"}}
	_, missing, err := newNotifier(cfg)
	require.NoError(t, err)
	require.Empty(t, missing)
	cfg.Notify.ConsoleURL = ""
	_, missing, err = newNotifier(cfg)
	require.NoError(t, err)
	require.Contains(t, missing, "CONSOLE_URL is not set")
}
