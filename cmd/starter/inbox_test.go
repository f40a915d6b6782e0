package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client"
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

	out.Reset()
	require.NoError(t, printInbox(&out, nil, now))
	require.Equal(t, "nothing waits for a person\n", out.String())
}
