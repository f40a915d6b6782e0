package engine

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolround/toolround/internal/tokens"
)

// tenants reads CONSOLE_TOKENS for the tenant of a session (H10): the
// scope of the first scoped token that covers it, so the caches that
// sessions share (fetch_page's, K4) are shared within a tenant only. A
// session no scoped token covers is in the shared tenant "". Without the
// file every session is.
func tenants(path string) (func(session string) string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("CONSOLE_TOKENS: %w", err)
	}
	defer f.Close()
	ts, err := tokens.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("CONSOLE_TOKENS %s: %w", path, err)
	}
	var scoped []tokens.Token
	for _, t := range ts {
		if t.Sessions != nil {
			scoped = append(scoped, t)
		}
	}
	if len(scoped) == 0 {
		return nil, nil
	}
	return func(session string) string {
		for _, t := range scoped {
			if t.Covers(session) {
				return "sessions=" + strings.Join(t.Sessions, ",")
			}
		}
		return ""
	}, nil
}
