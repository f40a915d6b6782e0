package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// TestRuleKeyRotation: with TOOLROUND_RULE_KEY_PREVIOUS holding the old key,
// rules and usage the old key signed still verify, what is signed from then
// on is signed with the new key only, and once the previous key is gone the
// old MACs verify no more. A MAC of neither key never verifies.
func TestRuleKeyRotation(t *testing.T) {
	ctx := context.Background()
	oldKey := []byte("0123456789abcdef0123456789abcdef")
	newKey := []byte("fedcba9876543210fedcba9876543210")
	other := []byte("another key, never configured...")
	before := &Activities{RuleKey: oldKey}
	during := &Activities{RuleKey: newKey, RuleKeyPrevious: oldKey}
	after := &Activities{RuleKey: newKey}
	stranger := &Activities{RuleKey: other}

	rules := []round.AllowRule{{Tool: "read_file", Pattern: "*.md"}, {Tool: "run_command", Args: `{"command":"ls"}`}}
	in := wire.RulesInput{SessionID: "s", RunID: "r", Rules: rules}
	oldSigned, err := before.SignRules(ctx, in)
	require.NoError(t, err)
	forged, err := stranger.SignRules(ctx, in)
	require.NoError(t, err)
	verify := func(a *Activities, rules []round.AllowRule) []int {
		out, err := a.VerifyRules(ctx, wire.RulesInput{SessionID: "s", RunID: "r", Rules: rules})
		require.NoError(t, err)
		return out.Verified
	}
	mixed := []round.AllowRule{oldSigned.Rules[0], forged.Rules[1]}
	require.Equal(t, []int{0}, verify(during, mixed), "during the window the old key's rule verifies, a stranger's does not")
	require.Empty(t, verify(after, oldSigned.Rules), "after the window the old key's rules verify no more")

	newSigned, err := during.SignRules(ctx, in)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, verify(after, newSigned.Rules), "during the window rules are signed with the new key")
	require.Empty(t, verify(before, newSigned.Rules), "and not with the old one")

	for _, bound := range []bool{true, false} {
		u := wire.UsageInput{SessionID: "s", RunID: "r", Usage: round.Usage{Calls: 4, Round: 2}, Bound: bound}
		mac, err := before.SignUsage(ctx, u)
		require.NoError(t, err)
		u.Usage.MAC = mac.MAC
		out, err := during.VerifyUsage(ctx, u)
		require.NoError(t, err)
		require.True(t, out.Verified, "usage the old key signed verifies during the window (bound %v)", bound)
		out, _ = after.VerifyUsage(ctx, u)
		require.False(t, out.Verified, "and not after it (bound %v)", bound)
		fresh, err := during.SignUsage(ctx, u)
		require.NoError(t, err)
		u.Usage.MAC = fresh.MAC
		out, _ = after.VerifyUsage(ctx, u)
		require.True(t, out.Verified, "usage signed during the window is the new key's (bound %v)", bound)
	}

	legacy := wire.UsageInput{SessionID: "s", RunID: "r", Usage: round.Usage{Calls: 2}}
	mac, err := before.SignUsage(ctx, legacy)
	require.NoError(t, err)
	legacy.Usage.MAC, legacy.Bound = mac.MAC, true
	out, _ := during.VerifyUsage(ctx, legacy)
	require.Equal(t, wire.VerifyUsageOutput{Unbound: true}, out, "an unbound usage of the old key is still reported unbound")
}
