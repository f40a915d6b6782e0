package client

import (
	"fmt"
	"strings"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// SealSecrets returns an Options.Prepare that seals the value of every
// store_secret call (direct or through run_tool), so that the plaintext never
// reaches workflow history. The key is loaded only when a round has such a
// call; workers must use the same key (TOOLROUND_SECRET_KEY).
func SealSecrets(cfg secrets.Config) func(*round.Input) error {
	return func(in *round.Input) error {
		var key []byte
		for i := range in.Assistant.ToolCalls {
			c := &in.Assistant.ToolCalls[i]
			args := string(c.Function.Arguments)
			if c.Function.Name != tools.StoreSecret && !(c.Function.Name == tools.RunTool && strings.Contains(args, tools.StoreSecret)) {
				continue
			}
			if key == nil {
				k, err := cfg.LoadKey()
				if err != nil {
					return fmt.Errorf("seal store_secret values: %w", err)
				}
				key = k
			}
			sealed, err := secrets.SealToolCall(key, c.Function.Name, args)
			if err != nil {
				return fmt.Errorf("call %s: %w (the round was not submitted, so the value went nowhere)", c.ID, err)
			}
			c.Function.Arguments = round.Arguments(sealed)
		}
		return nil
	}
}
