package engine

import (
	"fmt"
	"os"

	"github.com/toolround/toolround/internal/tokens"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/notify"
)

// newNotifier is the worker's webhook sender (N1), nil when no webhook is
// configured. Links (N2) are minted when CONSOLE_URL and NOTIFY_APPROVER
// are set and NOTIFY_APPROVER is an approver token of CONSOLE_TOKENS: then
// for the sessions its scope covers, signed with the link key. missing is,
// when webhooks go out without approve and deny links, one line that says
// which piece is missing, for the worker to log at start.
func newNotifier(cfg Config) (n *notify.Notifier, missing string, err error) {
	nc := cfg.Notify
	if !nc.Enabled() {
		return nil, "", nil
	}
	why := ""
	switch {
	case nc.ConsoleURL == "":
		why = "CONSOLE_URL is not set (not even an open link)"
	case nc.Approver == "":
		why = "NOTIFY_APPROVER is not set (the console token name links decide as)"
	case cfg.ConsoleTokens == "":
		why = fmt.Sprintf("CONSOLE_TOKENS is not set for this worker, which reads the scope of NOTIFY_APPROVER=%s there", nc.Approver)
	default:
		tok, err := approverToken(cfg.ConsoleTokens, nc.Approver)
		if err != nil {
			return nil, "", err
		}
		switch {
		case tok == nil:
			why = fmt.Sprintf("CONSOLE_TOKENS %s has no approver token named %q (NOTIFY_APPROVER)", cfg.ConsoleTokens, nc.Approver)
		case tok.Role != tokens.RoleApprover:
			why = fmt.Sprintf("%q is an %s token in CONSOLE_TOKENS %s, not an approver (NOTIFY_APPROVER)", nc.Approver, tok.Role, cfg.ConsoleTokens)
		default:
			if nc.LinkKey, err = cfg.LinkKey.LoadKey(); err != nil {
				return nil, "", fmt.Errorf("engine: the key that signs links: %w", err)
			}
			nc.Covers = tok.Covers
		}
	}
	// Slack bodies carry the console's link only, by design.
	if why != "" && (nc.Format != "slack" || nc.ConsoleURL == "") {
		missing = "webhooks go out without approve and deny links: " + why
	}
	return &notify.Notifier{Config: nc}, missing, nil
}

// approverToken is the console token named approver, an approver's if
// there is one; nil when the tokens file has no token of that name.
func approverToken(path, approver string) (*tokens.Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: CONSOLE_TOKENS, read for %s: %w", notify.EnvApprover, err)
	}
	defer f.Close()
	ts, err := tokens.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("engine: CONSOLE_TOKENS %s: %w", path, err)
	}
	var found *tokens.Token
	for i, t := range ts {
		if t.Name != approver {
			continue
		}
		if t.Role == tokens.RoleApprover {
			return &ts[i], nil
		}
		found = &ts[i]
	}
	return found, nil
}

// notifySettings are what each round records of the webhooks: whether
// there is one, and how long its POSTs are retried.
func notifySettings(c notify.Config) *workflows.NotifySettings {
	if !c.Enabled() {
		return nil
	}
	return &workflows.NotifySettings{Retry: c.Retry}
}
