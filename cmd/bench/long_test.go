package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfirmTimeoutLetsBothRemindersFireBeforeTheApproval(t *testing.T) {
	for _, wait := range []time.Duration{10 * time.Second, 30 * time.Minute} {
		ct := confirmTimeoutFor(wait)
		require.Greater(t, ct, wait)
		require.Less(t, time.Duration(float64(ct)*0.9), wait, "the 90%% reminder of %s comes before the approval after %s", ct, wait)
		require.Equal(t, ct, ct.Truncate(time.Second), "whole seconds")
	}
	require.Equal(t, 32*time.Minute, confirmTimeoutFor(30*time.Minute))
}

func TestParseLongOptions(t *testing.T) {
	t.Setenv("BENCH_APPROVAL_WAIT", "10s")
	o, err := parseLongOptions([]string{"-parts", "calls,approval", "-calls", "20"})
	require.NoError(t, err)
	require.Equal(t, []string{"calls", "approval"}, o.Parts)
	require.Equal(t, 20, o.Calls)
	require.Equal(t, 10*time.Second, o.ApprovalWait)
	require.Equal(t, 11*time.Second, o.ConfirmTimeout)

	_, err = parseLongOptions([]string{"-parts", "nope"})
	require.ErrorContains(t, err, `no part "nope"`)
	_, err = parseLongOptions([]string{"-approval-wait", "1m", "-confirm-timeout", "1m"})
	require.ErrorContains(t, err, "must be longer than the wait")
	_, err = parseLongOptions([]string{"-calls", "5000"})
	require.ErrorContains(t, err, "want 1 to 2000")
}

func TestLongReportPrint(t *testing.T) {
	r := &LongReport{
		ServerVersion: "1.29.1", Address: "127.0.0.1:7233", CPUs: 2,
		Rounds: []LongRound{{Part: "calls", Tool: ToolNoop, Calls: 500, LatencyMS: 1234.5, Events: 516, Bytes: 600000, WorkflowTasks: 1,
			CountByKind: map[string]int{"EVENT_TYPE_MARKER_RECORDED/LocalActivity": 501}, BytesByKind: map[string]int{"EVENT_TYPE_MARKER_RECORDED/LocalActivity": 160000}}},
		Approval: &ApprovalWait{LongRound: LongRound{Part: "approval", Tool: ToolWrite, Calls: 1}, WaitSeconds: 1800, ConfirmTimeoutSeconds: 1920,
			ApproveMS: 40, ApprovalToResultMS: 90, MemoryDuringMaxRSS: 52, MemoryDuringLastRSS: 51, MemorySamples: 61, Status: "ok"},
	}
	var out bytes.Buffer
	r.Print(&out)
	require.Contains(t, out.String(), "calls: 500 x bench_noop in 1234.5 ms; history 516 events, 600000 bytes")
	require.Contains(t, out.String(), "MARKER_RECORDED/LocalActivity 501 160000B;")
	require.Contains(t, out.String(), "approval: the call waited 1800 s (confirm timeout 1920 s)")
	require.Contains(t, out.String(), "approval to result 90.0 ms, status ok")
	require.Contains(t, out.String(), "highest 52.0 MiB, last 51.0 MiB (61 readings)")
}
