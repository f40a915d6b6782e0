package approval_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
)

// TestRoundUsageMACBindsTheRound (T15): a usage signed for one round of a
// run verifies for that round only, and never as a usage of before T15.
func TestRoundUsageMACBindsTheRound(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	u := []byte(`{"calls":2}`)
	mac := approval.RoundUsageMAC(key, "s", "r", 3, u)
	require.True(t, approval.VerifyRoundUsage(key, "s", "r", 3, u, mac))
	require.False(t, approval.VerifyRoundUsage(key, "s", "r", 2, u, mac))
	require.False(t, approval.VerifyRoundUsage(key, "s", "r2", 3, u, mac))
	require.False(t, approval.VerifyRoundUsage(key, "s", "r", 3, []byte(`{"calls":1}`), mac))
	require.False(t, approval.VerifyUsage(key, "s", "r", u, mac))
	require.False(t, approval.VerifyRoundUsage(key, "s", "r", 3, u, approval.UsageMAC(key, "s", "r", u)))
	require.False(t, approval.VerifyRoundUsage(key[:8], "s", "r", 3, u, mac))
}
