package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// TestUsageIsSignedForItsRound (T15): a bound usage verifies for the round
// it names only; one signed before T15 (for session and run) is reported
// unbound, never verified; without a key nothing verifies.
func TestUsageIsSignedForItsRound(t *testing.T) {
	a := &Activities{RuleKey: []byte("0123456789abcdef0123456789abcdef")}
	ctx := context.Background()
	u := round.Usage{Calls: 2, Round: 3}
	in := wire.UsageInput{SessionID: "s", RunID: "r", Usage: u, Bound: true}
	signed, err := a.SignUsage(ctx, in)
	require.NoError(t, err)
	in.Usage.MAC = signed.MAC
	out, err := a.VerifyUsage(ctx, in)
	require.NoError(t, err)
	require.Equal(t, wire.VerifyUsageOutput{Verified: true}, out)

	in.Usage.Round = 1
	out, _ = a.VerifyUsage(ctx, in)
	require.Equal(t, wire.VerifyUsageOutput{}, out, "another round's")

	old := wire.UsageInput{SessionID: "s", RunID: "r", Usage: round.Usage{Calls: 2}}
	legacy, err := a.SignUsage(ctx, old)
	require.NoError(t, err)
	old.Usage.MAC, old.Bound = legacy.MAC, true
	out, _ = a.VerifyUsage(ctx, old)
	require.Equal(t, wire.VerifyUsageOutput{Unbound: true}, out, "signed before T15")

	out, _ = (&Activities{}).VerifyUsage(ctx, old)
	require.Equal(t, wire.VerifyUsageOutput{}, out)
}
