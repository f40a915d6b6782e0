package round_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

func TestLimitsOutsideTheirBoundsAreInputErrors(t *testing.T) {
	for _, bad := range []string{
		`{"max_calls": -1}`, `{"max_calls": 0}`, `{"max_writes": 1000000001}`, `{"max_seconds": 1.5}`,
		`{"max_calls": "5"}`, `{"max_calls": 99999999999999999999}`, `{"max_cals": 5}`, `[1]`,
	} {
		_, err := round.ParseLimits(bad, "--limits")
		require.Error(t, err, bad)
	}
	_, err := round.ParseLimits(`{"max_cals": 5}`, "--limits")
	require.ErrorIs(t, err, round.ErrUnknownField)
	require.Contains(t, err.Error(), `did you mean "max_calls"?`)

	l, err := round.ParseLimits(`{"max_calls": 1, "max_commands": 1000000000, "max_model_tokens": 5000}`, "--limits")
	require.NoError(t, err)
	require.Equal(t, int64(1), l.MaxCalls)
	require.Equal(t, int64(round.MaxLimit), l.MaxCommands)
	require.Equal(t, int64(5000), l.MaxModelTokens)
	l, err = round.ParseLimits("", "--limits")
	require.NoError(t, err)
	require.True(t, l.Empty())
}

func TestRoundInputWithABadLimitDoesNotValidate(t *testing.T) {
	in := round.Input{SessionID: "s", RunID: "r", Round: 1}
	require.NoError(t, json.Unmarshal([]byte(`{"session_id":"s","run_id":"r","round":1,"limits":{"max_calls":0}}`), &in))
	err := in.Validate()
	require.Error(t, err)
	require.Contains(t, err.Error(), "limits.max_calls is 0")

	require.NoError(t, json.Unmarshal([]byte(`{"session_id":"s","run_id":"r","round":1,"limits":{"max_calls":-3}}`), &in))
	require.ErrorContains(t, in.Validate(), "limits.max_calls is -3")

	var strict round.Input
	body := []byte(`{"session_id":"s","run_id":"r","round":1,"limits":{"max_call":3}}`)
	require.NoError(t, json.Unmarshal(body, &strict))
	err = round.CheckFields(body, &strict, "the round input")
	require.True(t, errors.Is(err, round.ErrUnknownField), "U8: limits is a documented object")

	var agent round.AgentInput
	require.NoError(t, json.Unmarshal([]byte(`{"session_id":"s","run_id":"r","task":"x","limits":{"max_seconds":2000000000}}`), &agent))
	require.ErrorContains(t, agent.Validate(), "limits.max_seconds")
}

func TestWorkerLimitsBoundWhateverTheInputSays(t *testing.T) {
	in := round.Limits{MaxCalls: 50, MaxWrites: 3}
	worker := round.Limits{MaxCalls: 10, MaxSeconds: 60}
	got := in.Within(&worker)
	require.Equal(t, int64(10), got.MaxCalls, "the worker's tighter limit wins")
	require.Equal(t, int64(3), got.MaxWrites, "the input's own limit stays")
	require.Equal(t, int64(60), got.MaxSeconds, "a worker limit applies where the input sets none")

	state := round.Limits{MaxCalls: 5, MaxCommands: 2}
	over := state.Over(&round.Limits{MaxCalls: 8})
	require.Equal(t, round.Limits{MaxCalls: 8, MaxCommands: 2}, over)
}

func TestLimitCountsShowGrownLimits(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := &round.Usage{Calls: 7, Started: &start, Grown: map[string]int64{round.LimitCalls: 5}}
	got := wire.LimitCounts(&round.Limits{MaxCalls: 5, MaxSeconds: 600}, u, start.Add(90*time.Second))
	require.Equal(t, []round.LimitCount{{Limit: "max_calls", Count: 7, Max: 10}, {Limit: "max_seconds", Count: 90, Max: 600}}, got)

	c := u.Clone()
	c.Grown[round.LimitCalls] = 99
	require.Equal(t, int64(5), u.Grown[round.LimitCalls], "Clone copies the maps")
}

// TestFloorShareMayBeZero (G1, T15): a share is the rest over n rounded
// down; 0 is named apart, since 0 as a limit is none.
func TestFloorShareMayBeZero(t *testing.T) {
	l := round.Limits{MaxCalls: 10, MaxCommands: 1, MaxWrites: 3}
	now := time.Unix(1000, 0)
	u := &round.Usage{Calls: 3, Writes: 4, Grown: map[string]int64{round.LimitWrites: 3}}
	share, zero := l.FloorShare(u, 3, now)
	require.Equal(t, int64(2), share.MaxCalls, "floor((10-3)/3)")
	require.Equal(t, int64(1), share.MaxCommands)
	require.Equal(t, int64(1), share.MaxWrites, "floor((3+3-4)/3) is 0")
	require.Equal(t, []string{round.LimitCommands, round.LimitWrites}, zero)
	require.Equal(t, &round.Usage{Calls: 2}, share.Reservation(zero))

	past, zero := l.FloorShare(&round.Usage{Calls: 12}, 1, now)
	require.Equal(t, int64(1), past.MaxCalls)
	require.Contains(t, zero, round.LimitCalls, "a run past its limit gives 0, never 1")

	got := (&round.Usage{Calls: 5, Commands: 1}).Past(&round.Usage{Calls: 2, Commands: 3})
	require.Equal(t, &round.Usage{Calls: 3}, got)
}
