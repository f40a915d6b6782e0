package workflows_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// inFormat is in with its calls written in format f (F1): an Anthropic
// assistant message with a text block and tool_use blocks, or Responses
// output items with a reasoning item and function_call items.
func inFormat(t *testing.T, in round.Input, f round.Format) round.Input {
	t.Helper()
	calls := in.Assistant.ToolCalls
	switch f {
	case round.FormatAnthropic:
		blocks := []any{map[string]any{"type": "thinking", "thinking": "hmm", "signature": "sig"}, map[string]any{"type": "text", "text": "On it."}}
		for _, c := range calls {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": json.RawMessage(c.Function.Arguments)})
		}
		turn, err := json.Marshal(map[string]any{"role": "assistant", "content": blocks, "stop_reason": "tool_use"})
		require.NoError(t, err)
		in.Format, in.Assistant, in.Turn = f, round.Message{}, turn
	case round.FormatResponses:
		items := []any{map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}}}
		for _, c := range calls {
			items = append(items, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Function.Name, "arguments": string(c.Function.Arguments), "status": "completed"})
		}
		out, err := json.Marshal(items)
		require.NoError(t, err)
		in.Format, in.Assistant, in.Output = f, round.Message{}, out
	}
	// What the passes see is the same call list.
	got := in.ToolCalls()
	require.Len(t, got, len(calls))
	for i, c := range calls {
		require.Equal(t, c.ID, got[i].ID)
		require.Equal(t, c.Function.Name, got[i].Function.Name)
		require.JSONEq(t, string(c.Function.Arguments), string(got[i].Function.Arguments))
	}
	return in
}

// outcome is what a round did, apart from the format of its messages.
type outcome struct {
	WorkflowID string
	Statuses   []round.Status
	Contents   []string
	Via        []bool
	Decisions  []string
	Repeats    []*round.Repeat
	Texts      []string // each call's message text
	IsError    []bool
	Runs       map[string]int
	State      string
}

func outcomeOf(t *testing.T, h *harness, f round.Format, res round.Result) outcome {
	t.Helper()
	o := outcome{WorkflowID: res.WorkflowID, Runs: map[string]int{}}
	for _, r := range res.Results {
		o.Statuses = append(o.Statuses, r.Status)
		o.Contents = append(o.Contents, r.Content)
		o.Via = append(o.Via, r.ViaRunTool)
		d := ""
		if r.Approval != nil {
			d = r.Approval.Decision
		}
		o.Decisions = append(o.Decisions, d)
		o.Repeats = append(o.Repeats, r.Repeat)
		o.Runs[r.CallID] = h.rec.RunsOf(r.CallID)
	}
	// The run's clock (usage.started, B1) is the test environment's wall
	// time, which differs between the rounds compared, and so does the MAC
	// that covers it (T15); the rest must not.
	state := res.State
	if state != nil && state.Usage != nil && state.Usage.Started != nil {
		cp, u := *state, *state.Usage
		u.Started, u.MAC = nil, ""
		cp.Usage = &u
		state = &cp
	}
	st, err := json.Marshal(state)
	require.NoError(t, err)
	o.State = string(st)
	require.Equal(t, f.Name(), res.Format.Name())
	switch f {
	case round.FormatAnthropic:
		require.Len(t, res.Messages, 1, "F2: one user message of tool_result blocks")
		var m struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   string `json:"content"`
				IsError   bool   `json:"is_error"`
			} `json:"content"`
		}
		require.NoError(t, json.Unmarshal(res.Messages[0].Raw, &m))
		require.Equal(t, "user", m.Role)
		require.Len(t, m.Content, len(res.Results))
		for i, b := range m.Content {
			require.Equal(t, "tool_result", b.Type)
			require.Equal(t, res.Results[i].CallID, b.ToolUseID)
			o.Texts, o.IsError = append(o.Texts, b.Content), append(o.IsError, b.IsError)
		}
		require.Len(t, res.History, 2)
		require.Contains(t, string(res.History[0].Raw), `"signature":"sig"`, "thinking blocks pass through to the history")
	case round.FormatResponses:
		require.Len(t, res.Messages, len(res.Results))
		for i, m := range res.Messages {
			var item struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Output string `json:"output"`
			}
			require.NoError(t, json.Unmarshal(m.Raw, &item))
			require.Equal(t, "function_call_output", item.Type)
			require.Equal(t, res.Results[i].CallID, item.CallID)
			o.Texts, o.IsError = append(o.Texts, item.Output), append(o.IsError, round.IsError(res.Results[i].Status))
		}
		require.Len(t, res.History, 1+2*len(res.Results), "the output items as given, then the outputs")
	default:
		require.Len(t, res.Messages, len(res.Results))
		for i, m := range res.Messages {
			require.Equal(t, res.Results[i].CallID, m.ToolCallID)
			o.Texts, o.IsError = append(o.Texts, m.Content), append(o.IsError, round.IsError(res.Results[i].Status))
		}
	}
	return o
}

// TestEveryFormatRunsTheSameRounds runs the same two rounds in each format
// and compares what happened (F1): statuses, contents, run_tool unwrap,
// dedupe within a round and across rounds with its U3 note, approvals,
// refusals, unknown and invalid calls, the run state and the workflow ids
// do not depend on the format; only the messages' shape does (F2).
func TestEveryFormatRunsTheSameRounds(t *testing.T) {
	first := input(
		call("toolu_1", "read_files", `{"paths":["seed"]}`),
		call("toolu_2", "calculate", `{"expression":"1+1"}`),
		call("toolu_3", "calculate", `{ "expression" : "1+1" }`),
		call("toolu_4", "edit_file", `{"path":"a","new_text":"x"}`),
		call("toolu_5", "run_command", `{"command":"rm -rf /"}`),
		call("toolu_6", "no_such_tool", `{}`),
		call("toolu_7", "calculate", `{"nope":1}`),
		call("toolu_8", "run_tool", `{"name":"calculate","args":{"expression":"2+2"}}`),
	)
	var got []outcome
	for _, f := range round.Formats {
		t.Run(string(f), func(t *testing.T) {
			h := newHarness(t, 3)
			h.rec.Files["seed"] = "s"
			h.at(time.Second, func() {
				h.confirm(round.Confirm{CallID: "toolu_4", Approve: true})
				h.confirm(round.Confirm{CallID: "toolu_5", Approve: false, Reason: "no"})
			})
			res1 := h.run(t, inFormat(t, first, f))
			o1 := outcomeOf(t, h, f, res1)

			second := input(
				call("toolu_9", "run_tool", `{"name":"calculate","args":"{\"expression\":\"1+1\"}"}`),
				call("toolu_10", "read_files", `{"paths":["seed"]}`),
			)
			second.Round, second.Provider, second.State = 2, "openai", res1.State
			h2 := newHarness(t, 3)
			res2 := h2.run(t, inFormat(t, second, f))
			o2 := outcomeOf(t, h2, f, res2)
			got = append(got, o1, o2)

			require.Equal(t, []round.Status{"ok", "ok", "deduped", "ok", "skipped", "unknown", "invalid", "refused"}, o1.Statuses)
			require.Equal(t, []string{"not_needed", "not_needed", "not_needed", "approved", "denied", "not_needed", "not_needed", "not_needed"}, o1.Decisions)
			require.Equal(t, []bool{false, false, false, false, true, true, true, true}, o1.IsError)
			require.Equal(t, []round.Status{"deduped", "refused"}, o2.Statuses)
			require.Contains(t, o2.Texts[0], "round 1", "U3: the repeat names its round in every format")
			require.True(t, o2.Via[0])
		})
	}
	require.Len(t, got, 2*len(round.Formats))
	for i := 2; i < len(got); i++ {
		require.Equal(t, got[i%2], got[i], "round %d in format %s", i%2+1, round.Formats[i/2])
	}
}

// TestCutOffTurnsDoNotRun: a call of a turn that was cut off (Anthropic
// stop_reason max_tokens, a Responses item with status incomplete) is
// invalid with a content that says so, and never runs (F1).
func TestCutOffTurnsDoNotRun(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		h := newHarness(t, 3)
		h.rec.Files["seed"] = "s"
		in := input()
		in.Format, in.Assistant = round.FormatAnthropic, round.Message{}
		in.Turn = json.RawMessage(`{"role":"assistant","stop_reason":"max_tokens","content":[
			{"type":"tool_use","id":"toolu_1","name":"read_files","input":{"paths":["seed"]}},
			{"type":"tool_use","id":"toolu_2","name":"edit_file","input":{"path":"a"}}]}`)
		res := h.run(t, in)
		require.Equal(t, []round.Status{"invalid", "invalid"}, statuses(res))
		for _, r := range res.Results {
			require.Contains(t, r.Content, "cut off")
			require.Zero(t, h.rec.RunsOf(r.CallID))
		}
		require.Contains(t, string(res.Messages[0].Raw), `"is_error":true`)
	})
	t.Run("responses", func(t *testing.T) {
		h := newHarness(t, 3)
		h.rec.Files["seed"] = "s"
		in := input()
		in.Format, in.Assistant = round.FormatResponses, round.Message{}
		in.Output = json.RawMessage(`[
			{"type":"function_call","call_id":"call_1","name":"read_files","arguments":"{\"paths\":[\"seed\"]}","status":"completed"},
			{"type":"function_call","call_id":"call_2","name":"edit_file","arguments":"{\"path\":\"a\",\"new_te","status":"incomplete"}]`)
		res := h.run(t, in)
		require.Equal(t, []round.Status{"ok", "invalid"}, statuses(res))
		require.Contains(t, res.Results[1].Content, "cut off")
		require.Zero(t, h.rec.RunsOf("call_2"))
		require.Equal(t, 1, h.rec.RunsOf("call_1"))
	})
}

// TestARoundRecordedBeforeFormatsReadsOnlyTheOpenAIShape: replaying an
// execution recorded before the change (no marker of it), the round reads
// the input as that code did: no format, so no calls from output.
func TestARoundRecordedBeforeFormatsReadsOnlyTheOpenAIShape(t *testing.T) {
	h := newHarness(t, 3)
	h.env.OnGetVersion("wire-formats", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	in := inFormat(t, input(call("call_1", "calculate", `{"expression":"1+1"}`)), round.FormatResponses)
	h.env.ExecuteWorkflow(names.WorkflowName, in)
	require.NoError(t, h.env.GetWorkflowError())
	var out round.Output
	require.NoError(t, h.env.GetWorkflowResult(&out))
	require.Empty(t, out.Results)
	require.Zero(t, h.rec.RunsOf("call_1"))
}
