package tokens

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseApproveByElicitation: approve=elicitation marks an agent token,
// beside sessions= or alone, in either order; anything else is refused.
func TestParseApproveByElicitation(t *testing.T) {
	ts, err := Parse(strings.NewReader("aaaaaaaaaaaaaaaa bot agent approve=elicitation\n" +
		"bbbbbbbbbbbbbbbb bot2 agent sessions=s1,s2 approve=elicitation\n" +
		"cccccccccccccccc bot3 agent approve=elicitation sessions=s3\n" +
		"dddddddddddddddd bot4 agent sessions=s4\n"))
	require.NoError(t, err)
	require.True(t, ts[0].ApproveByElicitation)
	require.Nil(t, ts[0].Sessions)
	require.True(t, ts[1].ApproveByElicitation)
	require.Equal(t, []string{"s1", "s2"}, ts[1].Sessions)
	require.True(t, ts[2].ApproveByElicitation)
	require.Equal(t, []string{"s3"}, ts[2].Sessions)
	require.False(t, ts[3].ApproveByElicitation)
	for _, bad := range []string{
		"aaaaaaaaaaaaaaaa alice approver approve=elicitation",
		"aaaaaaaaaaaaaaaa bot agent approve=always",
		"aaaaaaaaaaaaaaaa bot agent approve=elicitation approve=elicitation",
		"aaaaaaaaaaaaaaaa bot agent sessions=a sessions=b",
		"aaaaaaaaaaaaaaaa bot agent sessions=a approve=elicitation extra",
	} {
		_, err := Parse(strings.NewReader(bad + "\n"))
		require.Error(t, err, bad)
	}
}
