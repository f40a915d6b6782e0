package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

func TestInboxTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	rounds := []client.InboxRound{{WorkflowID: "toolround/s1/r/1", SessionID: "s1", Pending: []client.PendingCall{
		{CallID: "e1", Tool: "edit_file", Kind: client.KindConfirm, Subject: "a.txt", Since: now.Add(-90 * time.Second), Deadline: now.Add(28 * time.Minute)},
		{CallID: "q1", Tool: "ask_user", Kind: client.KindAnswer, Questions: []string{"Ship it?", "When?"}, Since: now.Add(-time.Second), Deadline: now.Add(-time.Second)},
	}}}
	var out bytes.Buffer
	require.NoError(t, printInbox(&out, rounds, now))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"WORKFLOW", "CALL", "TOOL", "WAITED", "FOR", "DEADLINE", "SUBJECT"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"toolround/s1/r/1", "e1", "edit_file", "1m30s", "in", "28m0s", "a.txt"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"toolround/s1/r/1", "q1", "ask_user", "1s", "passed", "asks:", "Ship", "it?", "/", "When?"}, strings.Fields(lines[2]))

	// A limit wait shows the limits with their counts (B1).
	out.Reset()
	rounds = []client.InboxRound{{WorkflowID: "toolround/s1/r/2", SessionID: "s1", Pending: []client.PendingCall{
		{CallID: "c3", Tool: "calculate", Kind: client.KindLimit, Subject: "3+3", Since: now, Deadline: now.Add(time.Minute),
			Limits: []round.LimitCount{{Limit: round.LimitCalls, Count: 2, Max: 2}, {Limit: round.LimitWrites, Count: 0, Max: 5}}},
	}}}
	require.NoError(t, printInbox(&out, rounds, now))
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	require.Equal(t, []string{"toolround/s1/r/2", "c3", "calculate", "0s", "in", "1m0s", "limit", "(max_calls", "2/2,", "max_writes", "0/5):", "3+3"}, strings.Fields(lines[1]))

	out.Reset()
	require.NoError(t, printInbox(&out, nil, now))
	require.Equal(t, "nothing waits for a person\n", out.String())
}
