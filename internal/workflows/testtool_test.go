package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
)

// probeScript is a script_* tool with a side effect that records how it
// was called: its arguments and whether a test_tool call ran it.
type probeScript struct {
	mu    sync.Mutex
	args  []string
	tests []bool
}

func (p *probeScript) register(t *testing.T, reg *tools.Registry) {
	t.Helper()
	require.NoError(t, reg.Register(agent.TestTool()))
	require.NoError(t, reg.Register(tools.Definition{
		Name: "script_probe", Description: "A probe.", Source: tools.SourceScript,
		Parameters: tools.Schema(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}`),
		SideEffect: tools.AtMostOnce, Reason: "it runs the probe", Timeout: time.Minute,
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.args = append(p.args, string(req.Args))
			p.tests = append(p.tests, req.Test)
			return tools.Result{Content: "exit code: 3\n[stdout]\nprobe out\n[stderr]\nprobe err\n"}, nil
		},
	}))
}

// TestTestToolRunsTheScriptAsItsCallWould (G4): a test_tool call runs the
// script_* tool it names with its input, asks as a call of that tool
// would (the script's reason, its arguments), is counted as that call,
// never enters the dedupe map, and reports under test_tool; a name that is
// not a script, or an input that is not an object, is invalid without
// running anything.
func TestTestToolRunsTheScriptAsItsCallWould(t *testing.T) {
	h := newHarness(t, 3)
	p := &probeScript{}
	p.register(t, h.reg)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "t1", Approve: true})
		h.confirm(round.Confirm{CallID: "t2", Approve: false})
	})
	in := input(
		call("t1", "test_tool", `{"name":"script_probe","input":{"x":1}}`),
		call("t2", "test_tool", `{"name":"script_probe","input":{"x":1}}`),
		call("t3", "test_tool", `{"name":"run_command","input":{"command":"id"}}`),
		call("t4", "test_tool", `{"name":"script_probe","input":5}`),
		call("t5", "test_tool", `{"name":"script_probe","input":{"x":"one"}}`),
		call("t6", "test_tool", `{"name":"script_missing","input":{}}`),
	)
	in.State.Fetched = append(in.State.Fetched, "test_tool")
	res := h.run(t, in)

	require.Len(t, seen, 2, "both test calls ask, as calls of script_probe would")
	for _, q := range seen {
		require.Equal(t, "script_probe", q.Tool)
		require.JSONEq(t, `{"x":1}`, q.Arguments)
		require.Contains(t, q.Reason, "it runs the probe")
	}
	require.Equal(t, []round.Status{"ok", "skipped", "invalid", "invalid", "invalid", "unknown"}, statuses(res))
	for _, r := range res.Results {
		require.Equal(t, "test_tool", r.Tool, "the result is under the tool the model called")
	}
	require.Contains(t, res.Results[0].Content, "exit code: 3")
	require.Contains(t, res.Results[0].Content, "probe err")
	require.Contains(t, res.Results[2].Content, `test_tool runs script_* tools only, not "run_command"`)
	require.Contains(t, res.Results[3].Content, `"input" must be an object`)
	require.Contains(t, res.Results[4].Content, "invalid arguments", "the input is checked against the script's schema")
	require.Contains(t, res.Results[5].Content, "script_missing")
	require.Equal(t, []string{`{"x":1}`}, p.args, "only the approved call ran, with its input")
	require.Equal(t, []bool{true}, p.tests, "the script was told it runs for test_tool")

	require.Empty(t, res.State.Dedupe, "a test never enters the dedupe map (P1.3)")
	require.NotNil(t, res.State.Usage)
	require.EqualValues(t, 1, res.State.Usage.Calls, "B1 counts the run as a call of script_probe")
	require.EqualValues(t, 1, res.State.Usage.Writes, "a script with side effects counts as a write")
}

// Two identical tests in one round both run, and so does a test that a
// direct call of the script with the same input preceded: tests repeat.
func TestTestToolCallsAreNeverDeduplicated(t *testing.T) {
	h := newHarness(t, 3)
	p := &probeScript{}
	p.register(t, h.reg)
	in := auto(input(
		call("s1", "script_probe", `{"x":2}`),
		call("t1", "test_tool", `{"name":"script_probe","input":{"x":2}}`),
		call("t2", "test_tool", `{"name":"script_probe","input":"{\"x\":2}"}`),
	))
	in.State.Fetched = append(in.State.Fetched, "test_tool", "script_probe")
	res := h.run(t, in)
	require.Equal(t, []round.Status{"ok", "ok", "ok"}, statuses(res))
	require.Equal(t, []bool{false, true, true}, sortedTests(p), "the direct call and both tests ran")
	require.Len(t, res.State.Dedupe, 1, "only the direct call is in the dedupe map")
	for _, e := range res.State.Dedupe {
		require.Equal(t, "s1", e.CallID)
	}
}

func sortedTests(p *probeScript) []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var direct, tests []bool
	for _, t := range p.tests {
		if t {
			tests = append(tests, t)
		} else {
			direct = append(direct, t)
		}
	}
	return append(direct, tests...)
}
