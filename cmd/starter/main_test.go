package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

func TestHelpOnEverySubcommand(t *testing.T) {
	for _, name := range order {
		for _, help := range []string{"--help", "-h"} {
			var out bytes.Buffer
			err := run(context.Background(), []string{name, help}, nil, &out, &bytes.Buffer{})
			require.NoError(t, err, "%s %s", name, help)
			require.Equal(t, 0, report(err, &bytes.Buffer{}))
			require.True(t, strings.HasPrefix(out.String(), "usage: starter "+name+" "), out.String())
			require.Contains(t, out.String(), commands[name].summary)
		}
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"approve", "--help"}, nil, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "--remember")
	require.Contains(t, out.String(), "--allow-turn")
}

func TestUsageErrorsAreReadable(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"approve", "wf"}, {"deny", "wf", "c", "--remember"}, {"tools"}, {"round"}} {
		var stderr bytes.Buffer
		code := report(run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
		require.Equal(t, exitUsage, code, "%v", args)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		require.Greater(t, len(lines), 3, "the usage follows the message, one line each: %q", stderr.String())
		require.True(t, strings.HasPrefix(lines[0], "starter: "), lines[0])
		require.Contains(t, stderr.String(), "usage: starter")
	}
}

func TestEventLinesCarryTheApprovalID(t *testing.T) {
	var out bytes.Buffer
	ev := &eventWriter{w: &out, approvalIDs: map[string]string{}}
	ev.waiting(client.PendingCall{CallID: "c1", ApprovalID: "9f86d0"})
	ev.write(round.Event{ID: "wf/c1/confirm", Type: round.EventConfirmationRequested, WorkflowID: "wf", CallID: "c1"})
	ev.write(round.Event{ID: "wf/finished", Type: round.EventRoundFinished, WorkflowID: "wf"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.Equal(t, "9f86d0", first["approval_id"])
	require.Equal(t, "wf", first["workflow_id"])
	require.Equal(t, "c1", first["call_id"])
	require.NotContains(t, lines[1], "approval_id")
}
