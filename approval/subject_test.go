package approval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A user tool that declares a subject: its rules are globs over that one
// string argument, and nothing else of the call (Y3).
func TestSubjectRulesY3(t *testing.T) {
	kind := SubjectKind("order_id")
	rule := func(p string) []Rule { return []Rule{{Tool: "refund", Pattern: p}} }
	for _, tc := range []struct {
		pattern, args string
		want          bool
	}{
		{"A-*", `{"amount":3,"order_id":"A-17"}`, true},
		{"A-*", `{"amount":3,"order_id":"B-17"}`, false},
		{"A-?", `{"order_id":"A-1"}`, true},
		{"A-?", `{"order_id":"A-12"}`, false},
		{"*@example.com", `{"order_id":"ann@example.com"}`, true},
		{"*@example.com", `{"order_id":"ann@example.com.evil"}`, false},
		{"A-*", `{"order_id":17}`, false},                // not a string
		{"A-*", `{"amount":3}`, false},                   // no subject
		{"A-*", `{"ORDER_ID":"A-1"}`, false},             // keys are case-sensitive
		{"*", `{"amount":3}`, true},                      // every call
		{"A-1", `{"order_id":"A-1"}`, true},              // exact
		{"A-1", `{"order_id":"A-1","note":"A-*"}`, true}, // other arguments do not matter
	} {
		got := Match(rule(tc.pattern), kind, "refund", tc.args)
		require.Equal(t, tc.want, got, "%s over %s", tc.pattern, tc.args)
	}
	require.False(t, Match(rule("A-*"), kind, "other_tool", `{"order_id":"A-1"}`), "a rule is for its tool")
	require.False(t, Match(rule("A-*"), KindExact, "refund", `{"order_id":"A-1"}`), "without a subject, only * is a pattern")

	require.NoError(t, ValidatePattern(kind, "refund", "A-*"))
	require.Error(t, ValidatePattern(kind, "refund", ""))
	require.Error(t, ValidatePattern(kind, "refund", "A-\n*"))
	require.Error(t, ValidatePattern(KindExact, "refund", "A-*"))
	_, ok := subjectArg(Kind("subject:"))
	require.False(t, ok)
}
