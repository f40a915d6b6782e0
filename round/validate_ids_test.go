package round

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round/names"
)

func TestValidIdentifier(t *testing.T) {
	for _, ok := range []string{"s", "s1", "S-1", "a.b_c-d", "0", "run.2026-11-30", strings.Repeat("a", 128)} {
		require.True(t, names.ValidIdentifier(ok), ok)
	}
	for _, bad := range []string{
		"", ".", "..", "x/y", "y/z", "a:b", "-a", "_a", ".a", "a b", "a\x00", "a\n", "é", "a/..",
		"a\\b", "a%2f", strings.Repeat("a", 129), "toolround/x",
	} {
		require.False(t, names.ValidIdentifier(bad), "%q", bad)
	}
}

// TestInputIdentifiers: "x/y" with "z" and "x" with "y/z" gave the same
// workflow id; both are now input errors (T6).
func TestInputIdentifiers(t *testing.T) {
	tests := []struct {
		session, run string
		errPart      string
	}{
		{"s1", "r1", ""},
		{"x/y", "z", "session_id"},
		{"x", "y/z", "run_id"},
		{".", "r", "session_id"},
		{"s", "..", "run_id"},
		{"s:1", "r", "session_id"},
		{"s", strings.Repeat("r", 129), "run_id"},
		{"", "r", "session_id is missing"},
	}
	for _, tt := range tests {
		in := Input{SessionID: tt.session, RunID: tt.run, Round: 1}
		err := in.Validate()
		if tt.errPart == "" {
			require.NoError(t, err, "%q %q", tt.session, tt.run)
			continue
		}
		require.Error(t, err, "%q %q", tt.session, tt.run)
		require.Contains(t, err.Error(), tt.errPart)
	}
}

// TestConfirmTimeoutBounds: 18446744074 seconds overflowed into 290 ms; any
// timeout outside 1 s .. 7 days is an input error (T3).
func TestConfirmTimeoutBounds(t *testing.T) {
	tests := []struct {
		seconds int
		ok      bool
	}{
		{0, true}, {1, true}, {1800, true}, {7 * 24 * 3600, true},
		{7*24*3600 + 1, false}, {18446744074, false}, {-1, false}, {-18446744074, false},
		{int(^uint(0) >> 1), false}, {-int(^uint(0)>>1) - 1, false},
	}
	for _, tt := range tests {
		in := Input{SessionID: "s", RunID: "r", Round: 1, ConfirmTimeoutSeconds: tt.seconds}
		err := in.Validate()
		if tt.ok {
			require.NoError(t, err, tt.seconds)
		} else {
			require.Error(t, err, tt.seconds)
		}
	}
	_, err := ParseInput([]byte(`{"session_id":"s","run_id":"r","round":1,"confirm_timeout_seconds":18446744074}`))
	require.ErrorContains(t, err, "confirm_timeout_seconds")
}

// TestBadIdentifierIsQuotedWhole: the message quotes a long identifier cut
// at a character boundary, not half an "é" as an escape.
func TestBadIdentifierIsQuotedWhole(t *testing.T) {
	in := Input{SessionID: strings.Repeat("a", 63) + "é/x", RunID: "r", Round: 1}
	err := in.Validate()
	require.Error(t, err)
	require.Contains(t, err.Error(), `"`+strings.Repeat("a", 63)+`..."`)
	require.NotContains(t, err.Error(), `\x`)
}

func TestSessionOfWorkflowID(t *testing.T) {
	for id, want := range map[string]string{
		names.WorkflowID("s1", "r", 2):    "s1",
		names.AgentWorkflowID("s-2", "r"): "s-2",
	} {
		got, ok := names.SessionOfWorkflowID(id)
		if !ok || got != want {
			t.Fatalf("%q: got %q %v, want %q", id, got, ok, want)
		}
	}
	for _, id := range []string{"", "toolround/../r/1", "toolround/a/b", "other/a/b/1", "agentrun/a", "toolround/a\x00/r/1", "notify/w/t"} {
		if s, ok := names.SessionOfWorkflowID(id); ok {
			t.Fatalf("%q read as session %q", id, s)
		}
	}
}
