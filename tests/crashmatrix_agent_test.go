package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// The crash matrix's agent scenarios (L1): an agent run the matrix starts
// with `starter agent` in place of a round. At every point of the
// worker's (the runs' model calls, their steps and their rounds), the
// matrix checks every run: each call has exactly one result, each POST
// took effect at most once (once when its call is ok), unknown_outcome
// only for an attempt in flight, and every run completed within 60 s of
// the restart.
//
//   - subagent (G1): the model, the tests' scripted model on loopback
//     (model_test.go) with its script here, loads its tools, then in one
//     round starts two subagents and reads a page, then POSTs once and
//     answers with what the subagents said. One child run POSTs once,
//     the other reads a page; each loads its tool first and answers.
//   - agent-approval: a scripted model (docs/scripted-model.md, the
//     script in the run's input) that reads, calculates and POSTs twice,
//     each POST waiting until the scenario approves it, on a worker that
//     keeps results above a few bytes in Redis.
//   - agent-anthropic: a scripted model in the Messages API's format,
//     every call approved by the run, on the same worker.

// agentScenario is an agent run the matrix starts instead of a round.
type agentScenario struct {
	// args are the arguments of `starter agent` after "agent".
	args func(e *env, r *recorder) []string
	// final is what `starter agent` prints at the end.
	final string
	// runs is how many runs complete: the run and its subagents.
	runs int
	// approve makes the scenario's decisions: every waiting call of
	// the run's first rounds approved.
	approve bool
}

var subagentRun = &agentScenario{final: matrixFinal, runs: 3, args: func(e *env, r *recorder) []string {
	return []string{"--session", e.session, "--run", "run-1", "--provider", "claude-code", "--auto-approve", matrixParentTask}
}}

// matrixLargeResult is the LARGE_RESULT_BYTES of the scenarios that keep
// results in Redis: the recorder's pages are longer.
const matrixLargeResult = 16

// scriptedRun is an agent run of a scripted model: script gives the
// script, its URLs the recorder's.
func scriptedRun(final string, approve bool, script func(r *recorder) map[string]any) *agentScenario {
	return &agentScenario{final: final + "\n", runs: 1, approve: approve, args: func(e *env, r *recorder) []string {
		b, err := json.Marshal(script(r))
		require.NoError(e.t, err)
		path := filepath.Join(e.t.TempDir(), "script.json")
		require.NoError(e.t, os.WriteFile(path, b, 0o644))
		args := []string{"--session", e.session, "--run", "run-1", "--provider", "claude-code", "--model", round.ScriptModelPrefix + path}
		if !approve {
			args = append(args, "--auto-approve")
		}
		return append(args, "the crash matrix's run")
	}}
}

// approvalRun loads its tools, then reads, calculates and POSTs, then
// POSTs and reads; each POST waits for approval.
var approvalRun = scriptedRun("read, calculated and posted twice", true, func(r *recorder) map[string]any {
	call := func(id, name string, args map[string]any) map[string]any {
		b, err := json.Marshal(args)
		require.NoError(r.t, err)
		return map[string]any{"id": "call_" + id, "type": "function", "function": map[string]any{"name": name, "arguments": string(b)}}
	}
	post := func(id string) map[string]any {
		return call(id, "http_request", map[string]any{"url": r.url("/plain/" + id), "method": "POST", "body": id})
	}
	page := func(id string) map[string]any {
		return call(id, "fetch_page", map[string]any{"url": r.url("/page/" + id)})
	}
	turn := func(calls ...map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "content": "", "tool_calls": calls}
	}
	return map[string]any{"format": "openai", "turns": []any{
		turn(call("load", "find_tools", map[string]any{"query": "select:fetch_page,http_request,calculate"})),
		turn(page("page1"), call("calc", "calculate", map[string]any{"expression": "6*7"}), post("post1")),
		turn(post("post2"), page("page2")),
		map[string]any{"role": "assistant", "content": "read, calculated and posted twice"},
	}}
})

// anthropicRun's turns are Messages API turns (F4), each kept whole with
// the run and, above LARGE_RESULT_BYTES, in Redis: it loads its tools,
// then reads and POSTs, every call approved by the run.
var anthropicRun = scriptedRun("read and posted", false, func(r *recorder) map[string]any {
	use := func(id, name string, input map[string]any) map[string]any {
		return map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": input}
	}
	turn := func(blocks ...map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "content": blocks}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	return map[string]any{"format": "anthropic", "turns": []any{
		turn(text("I load my tools."), use("load", "find_tools", map[string]any{"query": "select:fetch_page,http_request"})),
		turn(text("I read the page and post the order."),
			use("page1", "fetch_page", map[string]any{"url": r.url("/page/page1")}),
			use("post1", "http_request", map[string]any{"url": r.url("/plain/post1"), "method": "POST", "body": "post1"})),
		turn(text("read and posted")),
	}}
})

// approvalRounds are the rounds of an agent scenario the harness looks at
// for calls that wait.
const approvalRounds = 3

const (
	matrixParentTask = "parent: have subagents post the order and read the page"
	matrixPosterTask = "poster: post the order once"
	matrixReaderTask = "reader: read the page"
	matrixFinal      = "parent done; the subagents said: [subagents] poster done | [subagents] reader done\n"
)

// matrixModel plays the parent and its two children, told apart by the
// first user message: model call k of a run gets the run's turn k (one
// more than the assistant turns it has).
type matrixModel struct {
	*modelServer
	r *recorder
}

func newMatrixModel(r *recorder) *matrixModel {
	m := &matrixModel{r: r}
	m.modelServer = newModelServer(r.t, m.turn, scripted.Options{})
	return m
}

// environ are the worker's variables that make m its model.
func (m *matrixModel) environ() []string { return m.env() }

func (m *matrixModel) turn(r scripted.Request) (scripted.Turn, error) {
	who := ""
	var said []string
	for _, msg := range r.Messages {
		switch msg.Role {
		case "user":
			if who == "" {
				who = map[string]string{matrixParentTask: "parent", matrixPosterTask: "poster", matrixReaderTask: "reader"}[msg.Content]
			}
		case "tool":
			if strings.HasPrefix(msg.Content, "[subagents]") {
				said = append(said, msg.Content)
			}
		}
	}
	post := func(id string) scripted.Call {
		return modelCall("call_"+id, "http_request", map[string]any{"url": m.r.url("/plain/" + id), "method": "POST", "body": id})
	}
	page := func(id string) scripted.Call {
		return modelCall("call_"+id, "fetch_page", map[string]any{"url": m.r.url("/page/" + id)})
	}
	calls := func(cs ...scripted.Call) (scripted.Turn, error) { return scripted.Turn{Calls: cs}, nil }
	switch fmt.Sprintf("%s/%d", who, r.Step) {
	case "parent/1":
		return calls(modelFindTools("call_load", "subagents,fetch_page,http_request"))
	case "parent/2":
		return calls(
			modelCall("call_sub1", "subagents", map[string]any{"task": matrixPosterTask, "name": "poster"}),
			modelCall("call_sub2", "subagents", map[string]any{"task": matrixReaderTask, "name": "reader"}),
			page("parent-page"),
		)
	case "parent/3":
		return calls(post("parent-post"))
	case "parent/4":
		return scripted.Turn{Text: "parent done; the subagents said: " + strings.Join(said, " | ")}, nil
	case "poster/1":
		return calls(modelFindTools("call_load", "http_request"))
	case "poster/2":
		return calls(post("poster-post"))
	case "reader/1":
		return calls(modelFindTools("call_load", "fetch_page"))
	case "reader/2":
		return calls(page("reader-page"))
	default:
		return scripted.Turn{Text: who + " done"}, nil
	}
}

// start starts the run (run-1).
func (a *agentScenario) start(e *env, r *recorder) <-chan result {
	return e.startAgent(a.args(e, r)...)
}

// await waits for `starter agent` to end, d to pass or stopped to close,
// approving the calls that wait when the scenario approves.
func (a *agentScenario) await(e *env, done <-chan result, d time.Duration, stopped <-chan struct{}) (result, int) {
	deadline := time.After(d)
	for {
		select {
		case out := <-done:
			return out, roundEnded
		case <-stopped:
			return result{}, workerStopped
		case <-deadline:
			return result{}, roundTimedOut
		case <-time.After(300 * time.Millisecond):
		}
		if a.approve {
			approveWaiting(e)
		}
	}
}

// approveWaiting approves each call of run-1's first rounds that waits
// for approval.
func approveWaiting(e *env) {
	for k := 1; k <= approvalRounds; k++ {
		wid := names.WorkflowID(e.session, "run-1", k)
		out, ok := tryStarter(e, 10*time.Second, "pending", wid)
		var pending []round.Pending
		if !ok || out.code != 0 || json.Unmarshal([]byte(out.stdout), &pending) != nil {
			continue
		}
		for _, p := range pending {
			if p.Kind == round.KindConfirm {
				tryStarter(e, 10*time.Second, "approve", wid, p.CallID)
			}
		}
	}
}

// checkAgentPoint waits for the parent run to end after the restart and
// checks every run, counting into st; flight says whether an attempt was
// in flight at the point.
func checkAgentPoint(t *testing.T, e *env, r *recorder, p crashPoint, done <-chan result, flight bool, st *crashStats) {
	a := p.scenario.agent
	out, how := a.await(e, done, 60*time.Second, nil)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reached++
	if how != roundEnded {
		st.stuck++
		t.Errorf("stuck: the agent run did not end within 60 s of the restart")
		return
	}
	if out.code != 0 || out.stdout != a.final {
		st.lost++
		t.Errorf("lost: the parent run ended with exit %d, %q: %s", out.code, out.stdout, out.stderr)
	}
	runs := []string{"run-1"}
	for i := 0; i < len(runs); i++ {
		run := runs[i]
		s, err := agentStatusOf(e, names.AgentWorkflowID(e.session, run))
		if err != nil || s.Status != round.AgentCompleted {
			st.stuck++
			t.Errorf("stuck: run %s did not complete: %v %+v", run, err, s)
			continue
		}
		// Each call the run's model made, and its results in the
		// conversation and in the rounds.
		calls := map[string]round.ToolCall{}
		messages := map[string]int{}
		for _, m := range s.Conversation {
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
			}
			if m.Role == "tool" {
				messages[m.ToolCallID]++
			}
		}
		results := map[string][]round.CallResult{}
		for k := 1; k <= s.Round; k++ {
			res, err := roundResultOf(e, names.WorkflowID(e.session, run, k))
			if err != nil {
				st.lost++
				t.Errorf("lost: round %d of run %s: %v", k, run, err)
				continue
			}
			for _, cr := range res.Results {
				results[cr.CallID] = append(results[cr.CallID], cr)
			}
		}
		for id, c := range calls {
			if messages[id] != 1 || len(results[id]) != 1 {
				st.lost++
				t.Errorf("lost: call %s of run %s has %d results in its rounds and %d in the conversation, want 1", id, run, len(results[id]), messages[id])
				continue
			}
			cr := results[id][0]
			switch {
			case cr.Status == round.StatusUnknownOutcome:
				st.unknown++
				if !flight {
					st.unjustified++
					t.Errorf("unknown_outcome for %s of run %s, but no attempt was in flight at %s", id, run, p)
				}
			case cr.Status == round.StatusOK && c.Function.Name == "subagents":
				runs = append(runs, names.SubagentRunID(cr.OperationID))
			case cr.Status == round.StatusOK && sideEffect(c) && !r.posted(postID(c)):
				st.lost++
				t.Errorf("lost: call %s of run %s is ok, but its POST never reached the recorder: %s", id, run, cr.Content)
			}
		}
	}
	if len(runs) != a.runs {
		st.lost++
		t.Errorf("lost: %d runs ended, want %d (the run and its subagents): %v", len(runs), a.runs, runs)
	}
	if d := r.duplicates(); len(d) > 0 {
		st.duplicates += len(d)
		t.Errorf("duplicates: %s", strings.Join(d, "; "))
	}
}

// agentStatusOf is `starter agent-status` of a run's workflow.
func agentStatusOf(e *env, wid string) (round.AgentStatus, error) {
	return starterJSON[round.AgentStatus](e, "agent-status", wid)
}

// roundResultOf is `starter result` of a round's workflow.
func roundResultOf(e *env, wid string) (round.Result, error) {
	return starterJSON[round.Result](e, "result", wid)
}

// starterJSON runs a starter command that prints one JSON value, within
// 30 s, and decodes it.
func starterJSON[T any](e *env, args ...string) (T, error) {
	var v T
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := e.starter(ctx, "", args...)
	if out.code != 0 {
		return v, fmt.Errorf("%s: exit %d: %s", strings.Join(args, " "), out.code, out.stderr)
	}
	return v, json.Unmarshal([]byte(out.stdout), &v)
}

// postID is the last part of the path a POST call sends to.
func postID(c round.ToolCall) string {
	var a struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal([]byte(c.Function.Arguments), &a)
	return a.URL[strings.LastIndex(a.URL, "/")+1:]
}

// tryStarter runs a starter command of the poll that approves waiting
// calls. A query to a round whose worker was just killed waits until a
// worker answers, which may take longer than timeout: that is not a
// failure, the poll asks again on its next turn (false).
func tryStarter(e *env, timeout time.Duration, args ...string) (result, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := e.runStarter(ctx, "", args...)
	return r, err == nil && ctx.Err() == nil
}
