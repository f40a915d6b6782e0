package notify

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVerifyLinkWithThePreviousKey: during a rotation a link verifies with
// the new key or the previous one, an expired link is still reported
// expired (not forged), and a link of neither key is refused.
func TestVerifyLinkWithThePreviousKey(t *testing.T) {
	oldKey, newKey, stranger := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{9}, 32)
	now := time.Unix(1_000_000, 0)
	l := Link{WorkflowID: "w", CallID: "c", Decision: DecisionDeny, By: "bob", Expires: now.Add(time.Hour).Unix(), Nonce: "n"}
	keys := [][]byte{newKey, oldKey}
	for _, key := range [][]byte{oldKey, newKey} {
		got, err := VerifyLinkWith(keys, MintLink(key, l), now)
		require.NoError(t, err)
		require.Equal(t, l, got)
	}
	_, err := VerifyLinkWith(keys, MintLink(stranger, l), now)
	require.ErrorIs(t, err, ErrBadLink)
	_, err = VerifyLinkWith([][]byte{newKey, nil}, MintLink(oldKey, l), now)
	require.ErrorIs(t, err, ErrBadLink, "without the previous key the old link is refused")
	_, err = VerifyLinkWith(keys, MintLink(oldKey, l), now.Add(2*time.Hour))
	require.ErrorIs(t, err, ErrLinkExpired)
	_, err = VerifyLinkWith(nil, MintLink(oldKey, l), now)
	require.ErrorIs(t, err, ErrBadLink, "no key verifies nothing")
}
