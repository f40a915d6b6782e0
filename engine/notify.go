package engine

import (
	"fmt"
	"os"

	"github.com/toolround/toolround/console"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/notify"
)

// newNotifier is the worker's webhook sender (N1), nil when no webhook is
// configured. Links (N2) are minted when CONSOLE_URL and NOTIFY_APPROVER
// are set and NOTIFY_APPROVER is an approver token of CONSOLE_TOKENS: then
// for the sessions its scope covers, signed with the link key.
func newNotifier(cfg Config) (*notify.Notifier, error) {
	nc := cfg.Notify
	if !nc.Enabled() {
		return nil, nil
	}
	if nc.ConsoleURL != "" && nc.Approver != "" {
		covers, err := approverScope(cfg.ConsoleTokens, nc.Approver)
		if err != nil {
			return nil, err
		}
		if covers != nil {
			if nc.LinkKey, err = cfg.LinkKey.LoadKey(); err != nil {
				return nil, fmt.Errorf("engine: the key that signs links: %w", err)
			}
			nc.Covers = covers
		}
	}
	return &notify.Notifier{Config: nc}, nil
}

// approverScope reads which sessions the console token named approver
// covers: nil when the tokens file is not set or has no approver token of
// that name.
func approverScope(path, approver string) (func(string) bool, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: CONSOLE_TOKENS, read for %s: %w", notify.EnvApprover, err)
	}
	defer f.Close()
	ts, err := console.ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("engine: CONSOLE_TOKENS %s: %w", path, err)
	}
	for _, t := range ts {
		if t.Name == approver && t.Role == console.RoleApprover {
			return t.Covers, nil
		}
	}
	return nil, nil
}

// notifySettings are what each round records of the webhooks: whether
// there is one, and how long its POSTs are retried.
func notifySettings(c notify.Config) *workflows.NotifySettings {
	if !c.Enabled() {
		return nil
	}
	return &workflows.NotifySettings{Retry: c.Retry}
}
