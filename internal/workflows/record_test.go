package workflows_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/internal/usertools"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/toolworker"
)

var record = flag.Bool("record", false, "run the replay scenarios against the Temporal server at TEMPORAL_ADDRESS and rewrite testdata/*.json")

// historyDir holds the recorded histories that replay_test.go replays.
const historyDir = "testdata"

// extraTools are tools beyond testtools' that some paths need: a side effect
// that hangs past its timeout (unknown_outcome), read-only tools that fail
// transiently before they succeed (retries, as local and as regular
// activities) or for good, and calls that block until cancelled.
func extraTools(attempts *attemptCounter) []tools.Definition {
	obj := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)
	hang := func(ctx context.Context, _ tools.Request) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}
	flaky := func(ctx context.Context, req tools.Request) (tools.Result, error) {
		if n := attempts.next(req.CallID); n < 3 {
			return tools.Result{}, tools.Transient(fmt.Errorf("%s: connection refused (attempt %d)", req.Tool, n))
		}
		return tools.Text(req.Tool + " answered on the third attempt"), nil
	}
	quick := &tools.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaxInterval: 100 * time.Millisecond}
	return []tools.Definition{
		{Name: "deploy", Description: "Deploy; hangs past its timeout.", SideEffect: tools.AtMostOnce, Timeout: time.Second, Parameters: obj, Handler: hang},
		{Name: "flaky_local", Description: "Read-only, short: a local activity.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Second, Retry: *quick, Parameters: obj, Handler: flaky},
		{Name: "flaky_remote", Description: "Read-only, long: a regular activity.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Minute, Retry: *quick, Parameters: obj, Handler: flaky},
		{Name: "always_down", Description: "Read-only; every attempt fails transiently.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Second, Retry: *quick, Parameters: obj,
			Handler: func(context.Context, tools.Request) (tools.Result, error) {
				return tools.Result{}, tools.Transient(errors.New("always_down: 503 service unavailable"))
			}},
		{Name: "always_late", Description: "Read-only; every attempt hangs past its timeout.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: time.Second, Retry: *quick, Parameters: obj, Handler: hang},
		{Name: "slow_read", Description: "Read-only, long: a regular activity that takes a moment.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Minute, Parameters: obj,
			Handler: func(ctx context.Context, req tools.Request) (tools.Result, error) {
				select {
				case <-time.After(150 * time.Millisecond):
					return tools.Text("slow_read " + req.CallID), nil
				case <-ctx.Done():
					return tools.Result{}, ctx.Err()
				}
			}},
		{Name: "hold", Description: "Read-only; runs until cancelled.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Minute, Parameters: obj, Handler: hang},
		{Name: "hold_serial", Description: "Side effect; runs until cancelled.", SideEffect: tools.AtMostOnce, Timeout: 5 * time.Minute, Parameters: obj, Handler: hang},
		{Name: "put_path", Description: "Write a path; calls of one path run one at a time.", Concurrent: true, SideEffect: tools.AtMostOnce, Timeout: 5 * time.Minute,
			Parameters:     json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`),
			ConcurrencyKey: tools.PathKey("path"), KeyLimit: tools.PathKeyLimit,
			Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
				return tools.Text("put " + req.CallID), nil
			}},
		{Name: "fill_workspace", Description: "Write past the workspace's limit: fails with workspace_full (W3).", SideEffect: tools.AtMostOnce, Parameters: obj,
			Handler: func(context.Context, tools.Request) (tools.Result, error) {
				return tools.Result{}, tools.WithCode(tools.CodeWorkspaceFull, errors.New("the write does not fit: the workspace is full"))
			}},
		lostToolDef(),
		{Name: "script_probe", Description: "A script with a side effect, for test_tool (G4).", SideEffect: tools.AtMostOnce, Source: tools.SourceScript, Parameters: obj,
			Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
				return tools.Text(fmt.Sprintf("exit code: 3\n[stdout]\nprobe %s test=%v\n[stderr]\n", req.CallID, req.Test)), nil
			}},
	}
}

// lostToolDef is an at-most-once tool whose first run is lost (it hangs past
// its timeout) and whose reconciler answers the verdict its arguments name.
// The run once more that an absent effect allows ends ok, or is lost too
// when the arguments say "again":"lost".
func lostToolDef() tools.Definition {
	type args struct {
		Verdict string `json:"verdict"`
		Again   string `json:"again"`
	}
	return tools.Definition{
		Name: "poke", Description: "Change something; the first attempt is lost.", SideEffect: tools.AtMostOnce, Timeout: time.Second,
		Parameters: json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"},"again":{"type":"string"}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, req tools.Request) (tools.Result, error) {
			var a args
			_ = req.Decode(&a)
			if req.Generation == 0 || a.Again == "lost" {
				<-ctx.Done()
				return tools.Result{}, ctx.Err()
			}
			return tools.Result{Content: "poked again", Touched: []string{"x"}}, nil
		},
		Reconcile: func(_ context.Context, req tools.Request) (tools.Reconciliation, error) {
			var a args
			_ = req.Decode(&a)
			return tools.Reconciliation{Verdict: tools.Verdict(a.Verdict), Content: "reconciler says " + a.Verdict, Touched: []string{"x"}}, nil
		},
	}
}

// shotPNG is the image that the shot tool returns.
var shotPNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89}

// shotTool is a read-only tool that returns an image beside its text line,
// as an MCP server's image content does (F2).
func shotTool() tools.Definition {
	return tools.Definition{
		Name: "shot", Description: "Take a picture.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: time.Minute,
		Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{Content: fmt.Sprintf("[image image/png, %d bytes]", len(shotPNG)),
				Images: []round.Image{{MIMEType: "image/png", Size: len(shotPNG), Data: shotPNG}}}, nil
		},
	}
}

// deskSchema is the form the ask tools' server asks for.
const deskSchema = `{"type":"object","required":["date"],"properties":{"date":{"type":"string"},"seats":{"type":"integer","default":2}}}`

// taskTools stand for an MCP server that runs a call as a task (E2): the
// call returns the task, the first poll finds it asking when, and the poll
// that carries the answer gives the result.
func taskTools() []tools.Definition {
	return []tools.Definition{{
		Name: "mcp_desk_long", Description: "Book; runs as a task.", Source: tools.SourceMCP, SideEffect: tools.AtMostOnce, Timeout: time.Minute,
		Parameters: json.RawMessage(`{"type":"object","properties":{"what":{"type":"string"}},"additionalProperties":false}`),
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			if req.Task == nil {
				return tools.Result{Task: &round.MCPTask{Server: "desk", ID: "task-7", Protocol: "2026-07-28", PollMS: 10, TTLMS: 60000}}, nil
			}
			raw, ok := req.InputResponses["when"]
			if !ok {
				return tools.Result{Input: &round.InputRequired{
					Asks: []round.ElicitRequest{{Key: "when", Seq: 1, Server: "desk", Mode: "form", Message: "When?", RequestedSchema: json.RawMessage(deskSchema)}}}}, nil
			}
			return tools.Text("booked " + string(raw)), nil
		},
	}}
}

// askTools stand for an MCP server's tools that ask for input (E1): ask_old
// as an older server does (an elicitation/create during the call, which
// the call's activity sends to its round and waits for), ask_new as a
// 2026-07-28 server does (input_required, which the round answers by
// running the call again with the answer and the server's state).
func askTools() []tools.Definition {
	params := json.RawMessage(`{"type":"object","properties":{"what":{"type":"string"}},"additionalProperties":false}`)
	booked := func(what string, content map[string]any) string {
		return fmt.Sprintf("booked %s on %v for %v", what, content["date"], content["seats"])
	}
	return []tools.Definition{{
		Name: "mcp_desk_ask_old", Description: "Book; asks during the call.", Source: tools.SourceMCP, SideEffect: tools.AtMostOnce, Timeout: time.Minute,
		Parameters: params,
		Handler: func(ctx context.Context, req tools.Request) (tools.Result, error) {
			var a struct{ What string }
			_ = req.Decode(&a)
			res, err := tools.Elicit(ctx, tools.Elicitation{Server: "desk", Mode: "form", Message: "When?", Schema: json.RawMessage(deskSchema)})
			if err != nil {
				return tools.Result{}, err
			}
			if res.Action != round.ElicitAccept {
				return tools.Text("not booked: " + res.Action), nil
			}
			return tools.Text(booked(a.What, wire.WithDefaults(json.RawMessage(deskSchema), res.Content))), nil
		},
	}, {
		Name: "mcp_desk_ask_new", Description: "Book; answers input_required.", Source: tools.SourceMCP, SideEffect: tools.AtMostOnce, Timeout: time.Minute,
		Parameters: params,
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			var a struct{ What string }
			_ = req.Decode(&a)
			raw, ok := req.InputResponses["booking"]
			if !ok {
				return tools.Result{Input: &round.InputRequired{State: "book:" + a.What,
					Asks:     []round.ElicitRequest{{Key: "booking", Seq: 1, Server: "desk", Mode: "form", Message: "When?", RequestedSchema: json.RawMessage(deskSchema)}},
					Answered: map[string]json.RawMessage{"roots": json.RawMessage(`{"roots":[]}`)}}}, nil
			}
			var r struct {
				Action  string
				Content map[string]any
			}
			if err := json.Unmarshal(raw, &r); err != nil || req.RequestState != "book:"+a.What {
				return tools.Result{}, fmt.Errorf("bad resume: %s %q", raw, req.RequestState)
			}
			return tools.Text(booked(a.What, r.Content)), nil
		},
	}}
}

// lookFiles are the files the look tool reads; they never change, so a
// recording is the same each time. A recorded state that differs stands
// for a change outside the agent.
var lookFiles = map[string]string{"a.txt": "hello", "b.txt": "after"}

// lookState is the state look records of a file with this content.
func lookState(content string) round.FileState {
	sum := sha256.Sum256([]byte(content))
	return round.FileState{Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:])}
}

// lookTool reads lookFiles and records their states, as read_files does
// with the workdir, so that its repeats are checked (U3).
func lookTool() tools.Definition {
	toTools := func(s round.FileState) tools.FileState {
		return tools.FileState{Size: s.Size, ModTime: s.ModTime, SHA256: s.SHA256, Missing: s.Missing}
	}
	return tools.Definition{
		Name: "look", Description: "Read files that never change.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Second,
		Parameters: json.RawMessage(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}},"required":["paths"],"additionalProperties":false}`),
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			var a struct{ Paths []string }
			if err := req.Decode(&a); err != nil {
				return tools.Result{}, err
			}
			res := tools.Result{Read: a.Paths, Files: map[string]tools.FileState{}}
			var lines []string
			for _, p := range a.Paths {
				lines = append(lines, p+": "+lookFiles[p])
				res.Files[p] = toTools(lookState(lookFiles[p]))
			}
			res.Content = strings.Join(lines, "\n")
			return res, nil
		},
		Changed: func(_ context.Context, files map[string]tools.FileState) []string {
			var out []string
			for p, s := range files {
				if toTools(lookState(lookFiles[p])) != s {
					out = append(out, p)
				}
			}
			sort.Strings(out)
			return out
		},
	}
}

type attemptCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *attemptCounter) next(callID string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n[callID]++
	return a.n[callID]
}

// scenario is one recorded round: its input, what the test does while it
// runs (signals, cancellation) and the status every call must end with.
type scenario struct {
	name  string
	in    round.Input
	drive func(t *testing.T, d *driver)
	want  map[string]round.Status
	// notify runs the scenario on a worker with a webhook configured
	// (NotifySettings in its snapshot, N1).
	notify bool
	// bounded runs it on a worker with WORKER_LIMITS max_calls 5 (B1).
	bounded bool
	// placed runs it on a worker with WORKSPACE_PLACEMENT=host (W4)
	// whose host queue has a worker; gone on one whose HOST_ID no worker
	// serves (W5).
	placed, gone bool
	// regular runs it on a worker that runs no call as a local activity.
	regular bool
}

// driver steers a running round from the recorder.
type driver struct {
	c    tclient.Client
	wfID string
}

func (d *driver) signal(t *testing.T, name string, v any) {
	t.Helper()
	require.NoError(t, d.c.SignalWorkflow(context.Background(), d.wfID, "", name, v))
}

func (d *driver) confirm(t *testing.T, s round.Confirm) { d.signal(t, names.SignalConfirm, s) }

// approvalID is the waiting call's approval_id.
func (d *driver) approvalID(t *testing.T, callID string) string {
	t.Helper()
	v, err := d.c.QueryWorkflow(context.Background(), d.wfID, "", names.QueryPending)
	require.NoError(t, err)
	var p []round.Pending
	require.NoError(t, v.Get(&p))
	for _, q := range p {
		if q.CallID == callID {
			return q.ApprovalID
		}
	}
	t.Fatalf("%s does not wait", callID)
	return ""
}

// update sends the confirm update and returns the round's answer.
func (d *driver) update(t *testing.T, s round.Confirm) error {
	t.Helper()
	h, err := d.c.UpdateWorkflow(context.Background(), tclient.UpdateWorkflowOptions{
		WorkflowID: d.wfID, UpdateName: names.UpdateConfirm, Args: []any{s}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(context.Background(), nil)
}

// answer sends the answer update (E1) and returns the round's answer.
func (d *driver) answer(t *testing.T, a round.ElicitAnswer) error {
	t.Helper()
	h, err := d.c.UpdateWorkflow(context.Background(), tclient.UpdateWorkflowOptions{
		WorkflowID: d.wfID, UpdateName: names.UpdateAnswer, Args: []any{a}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(context.Background(), nil)
}

// extend sends the extend update and returns the round's answer.
func (d *driver) extend(t *testing.T, e round.Extend) error {
	t.Helper()
	h, err := d.c.UpdateWorkflow(context.Background(), tclient.UpdateWorkflowOptions{
		WorkflowID: d.wfID, UpdateName: names.UpdateExtend, Args: []any{e}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(context.Background(), nil)
}

// waitPending waits until the round waits for exactly these calls.
func (d *driver) waitPending(t *testing.T, ids ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, err := d.c.QueryWorkflow(context.Background(), d.wfID, "", names.QueryPending)
		if err != nil {
			return false
		}
		var p []round.Pending
		if v.Get(&p) != nil || len(p) != len(ids) {
			return false
		}
		for i := range p {
			if p[i].CallID != ids[i] {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "pending %v", ids)
}

// waitRunning waits until these calls are running.
func (d *driver) waitRunning(t *testing.T, ids ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, err := d.c.QueryWorkflow(context.Background(), d.wfID, "", names.QueryProgress)
		if err != nil {
			return false
		}
		var pr round.Progress
		if v.Get(&pr) != nil {
			return false
		}
		running := map[string]bool{}
		for _, c := range pr.Calls {
			running[c.CallID] = c.State == "running"
		}
		for _, id := range ids {
			if !running[id] {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "running %v", ids)
}

func rtool(id, name, args string) round.ToolCall {
	b, _ := json.Marshal(map[string]any{"name": name, "args": json.RawMessage(args)})
	return call(id, tools.RunTool, string(b))
}

func scenarioInput(name string, calls ...round.ToolCall) round.Input {
	in := input(calls...)
	in.SessionID, in.RunID = "replay-"+name, "run"
	in.State.Fetched = append(in.State.Fetched, "deploy", "flaky_local", "flaky_remote", "always_down", "slow_read", "hold", "hold_serial", "put_path", "poke", "shot", "fill_workspace")
	return in
}

// scenarios between them take every status, every signal (answered,
// repeated, unknown, malformed), a confirm timeout, remember and allow_turn,
// cancellation while calls run and while they wait, retries as local and
// regular activities, the bounded fan-out, and a result and a state above
// their budgets.
func scenarios() []scenario {
	fanout := scenarioInput("fanout",
		call("h1", "slow_read", `{"n":1}`), call("c1", "calculate", `{"expression":"1+1"}`),
		call("h2", "slow_read", `{"n":2}`), call("s1", "run_command", `{"command":"make"}`),
		call("h3", "slow_read", `{"n":3}`), call("c2", "calculate", `{"expression":"2+2"}`),
		call("h4", "slow_read", `{"n":4}`), call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("c3", "calculate", `{"expression":"1+1"}`), call("t1", "write_todo", `{"items":[{"text":"x"}]}`),
		call("h5", "slow_read", `{"n":5}`), call("r1", "read_files", `{"paths":["a.txt"]}`),
	)
	fanout.AutoApprove, fanout.MaxConcurrent = true, 2

	pass1 := scenarioInput("pass1",
		call("f1", "find_tools", `{"query":"select:read_files"}`),
		call("x1", "read_files", `{"paths":["a.txt"]}`),
		rtool("w1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		rtool("u1", "nope", `{}`),
		rtool("u2", "run_command_background", `{"command":"ls"}`),
		call("m1", tools.RunTool, `{"name":"calculate","args":[1]}`),
		call("m2", tools.RunTool, `not json`),
		rtool("v1", "calculate", `{}`),
		rtool("v2", "calculate", `{"expression":5}`),
		rtool("r1", "read_files", `{"paths":["missing.txt"]}`),
		rtool("c1", "calculate", `{"expression":"1+1"}`),
		rtool("c2", "calculate", `{ "expression" : "1+1" }`),
		rtool("c3", "calculate", `{"expression":"7"}`),
	)
	pass1.Provider = "openai"
	pass1.State.Fetched = []string{"calculate", "read_files"}
	pass1.State.Seq = 1
	pass1.State.Dedupe = map[string]round.DedupeEntry{
		tools.DedupeKey("calculate", []byte(`{"expression":"7"}`)): {Tool: "calculate", Content: "= 7", Round: 1, CallID: "old", Seq: 1},
	}
	pass1.Round = 2

	signals := scenarioInput("signals",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("g1", "run_command", `{"command":"git status"}`),
		call("g2", "run_command", `{"command":"git log"}`),
		call("x1", "run_command", `{"command":"make install"}`),
		call("q1", "ask_user", `{"questions":["Which colour?","Ship it?"]}`),
		call("k1", "ide_open", `{"file":"a.go"}`),
		call("c1", "calculate", `{"expression":"3*3"}`),
	)
	signals.ClientTools = []tools.ToolSpec{{Type: "function", Function: tools.FunctionSpec{Name: "ide_open", Description: "Open a file in the IDE.", Parameters: []byte(`{"type":"object"}`)}}}

	allowTurn := scenarioInput("allow_turn",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("e2", "edit_file", `{"path":"b.txt","new_text":"y"}`),
		call("s1", "run_command", `{"command":"make"}`),
		call("s2", "read_files", `{"paths":[".env"]}`),
	)

	timeout := scenarioInput("confirm_timeout",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("q1", "ask_user", `{"questions":["Anyone there?"]}`),
		call("c1", "calculate", `{"expression":"1"}`),
	)
	timeout.ConfirmTimeoutSeconds = 1

	lost := scenarioInput("unknown_outcome", call("d1", "deploy", `{"n":1}`), call("c1", "calculate", `{"expression":"5"}`))
	lost.AutoApprove = true

	retries := scenarioInput("retries",
		call("l1", "flaky_local", `{"n":1}`), call("l2", "flaky_remote", `{"n":2}`), call("l3", "always_down", `{"n":3}`))

	cancelRun := scenarioInput("cancel_running",
		call("h1", "hold", `{"n":1}`), call("c1", "calculate", `{"expression":"1"}`),
		call("s1", "hold_serial", `{"n":1}`), call("s2", "run_command", `{"command":"ls"}`))
	cancelRun.AutoApprove, cancelRun.MaxConcurrent = true, 1

	var bigReads []round.ToolCall
	for i := range 20 {
		bigReads = append(bigReads, call(fmt.Sprintf("b%02d", i), "read_files", fmt.Sprintf(`{"paths":["big%02d.txt"]}`, i)))
	}
	// Twenty results of 32 KB: three copies of each (result, message,
	// history) pass ResultBudget, and their dedupe entries StateBudget.
	budget := scenarioInput("result_budget", bigReads...)

	cancelWait := scenarioInput("cancel_confirm",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`), call("c1", "calculate", `{"expression":"1"}`))

	// Honest repeats (U3, U4): a checked read served with its round, one
	// whose file changed running again, a repeat of the same round, and
	// the refusal of a fetched tool pointing to run_tool.
	repeats := scenarioInput("repeats",
		rtool("l1", "look", `{"paths":["a.txt"]}`),
		rtool("l2", "look", `{"paths":["b.txt"]}`),
		rtool("c1", "calculate", `{"expression":"7"}`),
		rtool("c2", "calculate", `{"expression":"8"}`),
		rtool("c3", "calculate", `{ "expression": "8" }`),
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("f1", "find_files", `{"pattern":"*.txt"}`),
	)
	repeats.Provider, repeats.Round = "openai", 3
	repeats.State.Fetched = []string{"calculate", "edit_file", "look"}
	repeats.State.Seq = 3
	repeats.State.Dedupe = map[string]round.DedupeEntry{
		tools.DedupeKey("look", []byte(`{"paths":["a.txt"]}`)): {Tool: "look", Content: "a.txt: hello", Round: 1, CallID: "l0", Seq: 1,
			Read: []string{"a.txt"}, Files: map[string]round.FileState{"a.txt": lookState(lookFiles["a.txt"])}},
		tools.DedupeKey("look", []byte(`{"paths":["b.txt"]}`)): {Tool: "look", Content: "b.txt: before", Round: 1, CallID: "l9", Seq: 2,
			Read: []string{"b.txt"}, Files: map[string]round.FileState{"b.txt": lookState("before")}},
		tools.DedupeKey("calculate", []byte(`{"expression":"7"}`)): {Tool: "calculate", Content: "= 7", Round: 2, CallID: "c0", Seq: 3},
	}

	off := false
	dedupeOff := scenarioInput("dedupe_off",
		call("l1", "look", `{"paths":["a.txt"]}`),
		call("c1", "calculate", `{"expression":"7"}`),
		call("c2", "calculate", `{"expression":"7"}`),
	)
	dedupeOff.Dedupe, dedupeOff.Round = &off, 2
	dedupeOff.State.Fetched = append(dedupeOff.State.Fetched, "look")
	dedupeOff.State.Dedupe = map[string]round.DedupeEntry{
		tools.DedupeKey("look", []byte(`{"paths":["a.txt"]}`)): {Tool: "look", Content: "a.txt: hello", Round: 1, CallID: "l0", Seq: 1,
			Read: []string{"a.txt"}, Files: map[string]round.FileState{"a.txt": lookState(lookFiles["a.txt"])}},
	}

	// inbox: the search attributes follow a decision and then an answer (T7).
	live := scenarioInput("live_decisions",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`), call("e2", "edit_file", `{"path":"b.txt","new_text":"y"}`))

	toolImages := scenarioInput("tool_images",
		call("s1", "shot", `{"n":1}`), call("s2", "shot", `{"n":1}`), call("c1", "calculate", `{"expression":"1+1"}`))

	inbox := scenarioInput("inbox",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`), call("q1", "ask_user", `{"questions":["Ship it?"]}`))

	approvals := scenarioInput("approvals",
		call("e1", "edit_file", `{"path":"a.txt","new_text":"from the model"}`),
		call("g1", "run_command", `{"command":"git status"}`),
		call("g2", "run_command", `{"command":"git log"}`),
		call("x1", "run_command", `{"command":"make install"}`),
		call("v1", "edit_file", `{"path":"b.txt"}`),
		call("h1", "http_request", `{"url":"http://example.test/","method":"HEAD"}`),
	)
	approvals.ConfirmTimeoutSeconds = 3

	rules := scenarioInput("signed_rules",
		call("g1", "run_command", `{"command":"git status"}`),
		call("t1", "run_command", `{"command":"touch X"}`),
		call("a1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
		call("s1", "read_files", `{"paths":[".env"]}`),
	)
	rules.ConfirmTimeoutSeconds = 3
	git := approval.Rule{Tool: "run_command", Pattern: "git *"}
	rules.State.Allow = []round.AllowRule{
		{Tool: "run_command", Pattern: "*"},
		round.AllowRule(approval.Sign(ruleKey, rules.SessionID, "another-run", approval.Rule{Tool: "run_command", Pattern: "touch *"})),
		round.AllowRule(approval.Sign(ruleKey, rules.SessionID, rules.RunID, git)),
	}

	lockdown := scenarioInput("rule_lockdown",
		call("g1", "run_command", `{"command":"git status"}`),
		call("c1", "calculate", `{"expression":"1+1"}`),
	)
	lockdown.State.Allow = []round.AllowRule{round.AllowRule(approval.Sign(ruleKey, lockdown.SessionID, lockdown.RunID, git))}

	// T12 (changeRuleScope): a read-only rule and one stored without a
	// scope approve g1 and m1, which run with read-only and write; w1 waits
	// and is approved with a rule remembered without a scope, read-only.
	scoped := scenarioInput("rule_scope",
		call("g1", "run_command", `{"command":"git status"}`),
		call("m1", "run_command", `{"command":"make test"}`),
		call("w1", "run_command", `{"command":"wc -l a.txt"}`),
	)
	scoped.State.Allow = []round.AllowRule{
		round.AllowRule(approval.Sign(ruleKey, scoped.SessionID, scoped.RunID, approval.Rule{Tool: "run_command", Pattern: "git *", Scope: approval.ScopeReadOnly})),
		round.AllowRule(approval.Sign(ruleKey, scoped.SessionID, scoped.RunID, approval.Rule{Tool: "run_command", Pattern: "make *"})),
	}

	// The same rounds again, recorded after changeBaseline1: one version
	// marker for every change instead of one per change.
	baselineFanout := fanout
	baselineFanout.SessionID = "replay-baseline_fanout"
	baselineApprovals := approvals
	baselineApprovals.SessionID = "replay-baseline_approvals"

	// Per-key limits (SPEC R): three writes of one path (spelled three
	// ways) run one after another while the other path's write and the
	// reads pass them.
	keyLimits := scenarioInput("key_limits",
		call("p1", "put_path", `{"path":"out/x.txt"}`),
		call("p2", "put_path", `{"path":"./out/x.txt"}`),
		call("p3", "put_path", `{"path":"out//x.txt"}`),
		call("q1", "put_path", `{"path":"out/y.txt"}`),
		call("c1", "calculate", `{"expression":"1+2"}`),
	)
	keyLimits.AutoApprove, keyLimits.MaxConcurrent = true, 3

	// Lost attempts reconciled (SPEC R): the effect found, proven absent
	// (the call runs once more), or not decided (unknown_outcome).
	lostApplied := scenarioInput("reconcile_applied", call("k1", "poke", `{"verdict":"applied"}`), call("c1", "calculate", `{"expression":"5"}`))
	lostApplied.AutoApprove = true
	lostAbsent := scenarioInput("reconcile_absent", call("k1", "poke", `{"verdict":"absent"}`), call("c1", "calculate", `{"expression":"5"}`))
	lostAbsent.AutoApprove = true
	lostUnknown := scenarioInput("reconcile_unknown", call("k1", "poke", `{"verdict":"unknown"}`), call("c1", "calculate", `{"expression":"5"}`))
	lostUnknown.AutoApprove = true
	lostAgain := scenarioInput("reconcile_lost_again", call("k1", "poke", `{"verdict":"absent","again":"lost"}`), call("c1", "calculate", `{"expression":"5"}`))
	lostAgain.AutoApprove = true

	// U7: calls that end in their activity (local and regular) and calls
	// whose end only the workflow knows, with baseline2's one marker.
	finished := scenarioInput("call_finished",
		call("c1", "calculate", `{"expression":"6*7"}`),
		call("c2", "calculate", `{"expression":"6*7"}`),
		call("u1", "nope", `{}`),
		call("e1", "edit_file", `{"path":"f.txt","new_text":"x"}`))
	finished.AutoApprove = true
	// P3.2 with helpful-hints: invalid arguments end without a next: hint,
	// a tool's own failure keeps its hint.
	hints := scenarioInput("helpful_hints",
		call("v1", "calculate", `{}`),
		call("r1", "read_files", `{"paths":["missing.txt"]}`))

	const ok, skipped = round.StatusOK, round.StatusSkipped
	approvalsDrive := func(t *testing.T, d *driver) {
		d.waitPending(t, "e1", "g1", "g2", "x1")
		d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: "stale"})
		require.Error(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: "stale"}))
		require.NoError(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: d.approvalID(t, "e1"), Remember: true,
			Args: []byte(`{"path":"a.txt","new_text":"edited"}`), By: "ann", Via: "cli"}))
		d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: d.approvalID(t, "g1"), Remember: true, Pattern: "git *"})
		d.signal(t, names.SignalExtend, round.Extend{CallID: "x1", Seconds: 1})
	}
	fanoutWant := map[string]round.Status{
		"h1": ok, "c1": ok, "h2": ok, "s1": ok, "h3": ok, "c2": ok, "h4": ok, "e1": ok, "c3": round.StatusDeduped, "t1": ok, "h5": ok, "r1": ok}
	approvalsWant := map[string]round.Status{
		"e1": ok, "g1": ok, "g2": ok, "x1": round.StatusExpired, "v1": round.StatusInvalid, "h1": ok}
	// MCP servers that ask for input (E1): an older one during the call, a
	// 2026-07-28 one with input_required; a refused answer, then accepted
	// ones (the second relies on the schema's default).
	elicitation := scenarioInput("mcp_elicitation",
		call("o1", "mcp_desk_ask_old", `{"what":"dinner"}`), call("n1", "mcp_desk_ask_new", `{"what":"lunch"}`))
	elicitation.AutoApprove = true
	elicitation.State.Fetched = append(elicitation.State.Fetched, "mcp_desk_ask_old", "mcp_desk_ask_new")

	// Your own tools (Y1-Y3): a read-only call and a side effect, each an
	// activity on a tool worker's queue; a call the tool worker answers
	// with a ToolError.
	userTools := scenarioInput("user_tools",
		call("u1", "user_lookup", `{"id":"A-1"}`),
		call("u2", "user_refund", `{"id":"A-1","amount":2}`),
		call("u3", "user_refund", `{"id":"A-1","amount":0}`),
		call("c1", "calculate", `{"expression":"1+1"}`))
	userTools.AutoApprove = true
	userTools.State.Fetched = append(userTools.State.Fetched, "user_lookup", "user_refund")

	// A user tool's call that sends a stored secret (Y3, T9): it asks; the
	// value goes sealed for the queue, and the tool's sealed answer is
	// opened and redacted in a local activity.
	userSecrets := scenarioInput("user_tool_secrets", call("k1", "user_lookup", `{"id":"{{secret:api}}"}`))
	userSecrets.AutoApprove = true
	userSecrets.State.Fetched = append(userSecrets.State.Fetched, "user_lookup")

	// An MCP call its server runs as a task (E2), which asks for input.
	tasks := scenarioInput("mcp_tasks", call("t1", "mcp_desk_long", `{"what":"brunch"}`))
	tasks.AutoApprove = true
	tasks.State.Fetched = append(tasks.State.Fetched, "mcp_desk_long")

	return []scenario{
		{name: "user_tools", in: userTools, want: map[string]round.Status{"u1": ok, "u2": ok, "u3": round.StatusError, "c1": ok}},
		{name: "user_tool_secrets", in: userSecrets, want: map[string]round.Status{"k1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "k1")
				d.confirm(t, round.Confirm{CallID: "k1", Approve: true, ApprovalID: d.approvalID(t, "k1")})
			}},
		{name: "mcp_tasks", in: tasks, want: map[string]round.Status{"t1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "t1")
				require.NoError(t, d.answer(t, round.ElicitAnswer{CallID: "t1", Action: "accept", Content: map[string]any{"date": "2027-02-03"}}))
			}},
		{name: "mcp_elicitation", in: elicitation, want: map[string]round.Status{"o1": ok, "n1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "o1")
				require.Error(t, d.answer(t, round.ElicitAnswer{CallID: "o1", Action: "accept", Content: map[string]any{"seats": 3}}))
				require.NoError(t, d.answer(t, round.ElicitAnswer{CallID: "o1", Action: "accept", Content: map[string]any{"date": "2027-01-01", "seats": 3}}))
				d.waitPending(t, "n1")
				require.NoError(t, d.answer(t, round.ElicitAnswer{CallID: "n1", Action: "accept", Content: map[string]any{"date": "2027-01-02"}}))
			}},
		{name: "baseline_fanout", in: baselineFanout, want: fanoutWant},
		{name: "baseline_approvals", in: baselineApprovals, want: approvalsWant, drive: approvalsDrive},
		{name: "repeats", in: repeats, want: map[string]round.Status{
			"l1": round.StatusDeduped, "l2": ok, "c1": round.StatusDeduped, "c2": ok, "c3": round.StatusDeduped,
			"e1": round.StatusRefused, "f1": round.StatusRefused}},
		{name: "dedupe_off", in: dedupeOff, want: map[string]round.Status{"l1": ok, "c1": ok, "c2": ok}},
		{name: "fanout", in: fanout, want: map[string]round.Status{
			"h1": ok, "c1": ok, "h2": ok, "s1": ok, "h3": ok, "c2": ok, "h4": ok, "e1": ok, "c3": round.StatusDeduped, "t1": ok, "h5": ok, "r1": ok}},
		{name: "pass1", in: pass1, want: map[string]round.Status{
			"f1": ok, "x1": round.StatusRefused, "w1": round.StatusSchema, "u1": round.StatusUnknown, "u2": round.StatusUnknown,
			"m1": round.StatusInvalid, "m2": round.StatusInvalid, "v1": round.StatusInvalid, "v2": round.StatusInvalid,
			"r1": round.StatusError, "c1": ok, "c2": round.StatusDeduped, "c3": round.StatusDeduped}},
		{name: "signals", in: signals, want: map[string]round.Status{
			"e1": ok, "g1": ok, "g2": ok, "x1": skipped, "q1": ok, "k1": ok, "c1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "g1", "g2", "x1")
				d.confirm(t, round.Confirm{CallID: "nope", Approve: true})
				d.signal(t, names.SignalConfirm, "not an object")
				d.confirm(t, round.Confirm{CallID: "g1", Approve: true, Remember: true, Pattern: "git *"})
				d.confirm(t, round.Confirm{CallID: "x1", Approve: false, Reason: "not now"})
				d.confirm(t, round.Confirm{CallID: "x1", Approve: true})
				d.signal(t, names.SignalAnswer, round.Answer{CallID: "nope", Answers: []string{"?"}})
				d.signal(t, names.SignalToolResult, round.ToolResult{CallID: "c1", Content: "not a client call"})
				d.confirm(t, round.Confirm{CallID: "e1", Approve: true})
				d.waitPending(t, "q1")
				d.signal(t, names.SignalAnswer, round.Answer{CallID: "q1", Answers: []string{"blue", "yes"}})
				d.signal(t, names.SignalAnswer, round.Answer{CallID: "q1", Answers: []string{"again"}})
				d.waitPending(t, "k1")
				d.signal(t, names.SignalToolResult, round.ToolResult{CallID: "k1", Content: "opened a.go"})
			}},
		{name: "allow_turn", in: allowTurn, want: map[string]round.Status{"e1": ok, "e2": ok, "s1": ok, "s2": round.StatusError},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "e2", "s1", "s2")
				d.confirm(t, round.Confirm{CallID: "e2", Approve: true, AllowTurn: true})
			}},
		{name: "confirm_timeout", in: timeout, want: map[string]round.Status{"e1": skipped, "q1": round.StatusError, "c1": ok}},
		{name: "unknown_outcome", in: lost, want: map[string]round.Status{"d1": round.StatusUnknownOutcome, "c1": ok}},
		{name: "retries", in: retries, want: map[string]round.Status{"l1": ok, "l2": ok, "l3": round.StatusError}},
		{name: "cancel_running", in: cancelRun, want: map[string]round.Status{
			"h1": round.StatusCancelled, "c1": round.StatusCancelled, "s1": round.StatusCancelled, "s2": round.StatusCancelled},
			drive: func(t *testing.T, d *driver) {
				d.waitRunning(t, "h1", "s1")
				require.NoError(t, d.c.CancelWorkflow(context.Background(), d.wfID, ""))
			}},
		{name: "result_budget", in: budget, want: func() map[string]round.Status {
			m := map[string]round.Status{}
			for _, c := range bigReads {
				m[c.ID] = ok
			}
			return m
		}()},
		{name: "approvals", in: approvals, want: map[string]round.Status{
			"e1": ok, "g1": ok, "g2": ok, "x1": round.StatusExpired, "v1": round.StatusInvalid, "h1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "g1", "g2", "x1")
				d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: "stale"})
				require.Error(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: "stale"}))
				require.NoError(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: d.approvalID(t, "e1"), Remember: true,
					Args: []byte(`{"path":"a.txt","new_text":"edited"}`), By: "ann", Via: "cli"}))
				d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: d.approvalID(t, "g1"), Remember: true, Pattern: "git *"})
				d.signal(t, names.SignalExtend, round.Extend{CallID: "x1", Seconds: 1})
			}},
		{name: "signed_rules", in: rules, want: map[string]round.Status{"g1": ok, "t1": skipped, "a1": ok, "s1": round.StatusExpired},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "t1", "a1", "s1")
				d.confirm(t, round.Confirm{CallID: "t1", Approve: false, ApprovalID: d.approvalID(t, "t1"), Reason: "no"})
				d.confirm(t, round.Confirm{CallID: "a1", Approve: true, ApprovalID: d.approvalID(t, "a1"), AllowTurn: true})
			}},
		{name: "cancel_confirm", in: cancelWait, want: map[string]round.Status{"e1": round.StatusCancelled, "c1": round.StatusCancelled},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1")
				require.NoError(t, d.c.CancelWorkflow(context.Background(), d.wfID, ""))
			}},
		{name: "key_limits", in: keyLimits, want: map[string]round.Status{"p1": ok, "p2": ok, "p3": ok, "q1": ok, "c1": ok}},
		{name: "reconcile_applied", in: lostApplied, want: map[string]round.Status{"k1": ok, "c1": ok}},
		{name: "reconcile_absent", in: lostAbsent, want: map[string]round.Status{"k1": ok, "c1": ok}},
		{name: "reconcile_unknown", in: lostUnknown, want: map[string]round.Status{"k1": round.StatusUnknownOutcome, "c1": ok}},
		{name: "reconcile_lost_again", in: lostAgain, want: map[string]round.Status{"k1": round.StatusUnknownOutcome, "c1": ok}},
		{name: "helpful_hints", in: hints, want: map[string]round.Status{"v1": round.StatusInvalid, "r1": round.StatusError}},
		{name: "call_finished", in: finished, want: map[string]round.Status{"c1": ok, "c2": round.StatusDeduped, "u1": round.StatusUnknown, "e1": ok}},
		{name: "rule_lockdown", in: lockdown, want: map[string]round.Status{"g1": ok, "c1": ok}},
		{name: "rule_scope", in: scoped, want: map[string]round.Status{"g1": ok, "m1": ok, "w1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "w1")
				require.NoError(t, d.update(t, round.Confirm{CallID: "w1", Approve: true, ApprovalID: d.approvalID(t, "w1"), Remember: true, Pattern: "wc *", By: "ann", Via: "cli"}))
			}},
		// A failure with a code (changeErrorCode): error_code in the result.
		{name: "error_code", in: errorCode(), want: map[string]round.Status{"f1": round.StatusError, "c1": ok}},
		// Calls whose every attempt failed, in passing and by timeout,
		// beside one that succeeds (changeFailedAttempts, P2.4).
		{name: "failed_attempts", in: failedAttempts(), regular: true,
			want: map[string]round.Status{"x1": round.StatusError, "x2": round.StatusError, "c1": ok}},
		// Two subagents beside a calculate call (changeSubagents, G1).
		{name: "subagents", in: subagentsRound(), want: map[string]round.Status{"a1": ok, "a2": ok, "c1": ok}},
		// Two identical tests of a script beside a calculate call
		// (changeTestTool, G4): both run, as calls of script_probe.
		{name: "test_tool", in: testToolRound(), want: map[string]round.Status{"t1": ok, "t2": ok, "c1": ok}},
		// A message to a chatbot beside a calculate call (changeChatbots,
		// G3): update-with-start of chat-helper, whose reply is the result.
		{name: "chatbots", in: chatbotsRound(), want: map[string]round.Status{"k1": ok, "c1": ok}},
		// A subagent, a chatbot and a calculate call in a round whose
		// snapshot records each tool's kind (ToolInfo.Kind), where older
		// snapshots named it by its facts (legacy.go).
		{name: "kinds", in: kindsRound(), want: map[string]round.Status{"a1": ok, "k1": ok, "c1": ok}},
		{name: "run_limits", in: runLimits(), want: map[string]round.Status{"c1": ok, "g1": ok, "c2": skipped},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "g1", "c2")
				id := d.approvalID(t, "g1")
				require.Error(t, d.update(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, AllowTurn: true}), "invalid_decision")
				require.Error(t, d.update(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, WaitID: "stale"}), "stale_wait")
				d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, Remember: true}) // ignored: remember on a limit
				require.NoError(t, d.update(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, By: "ann", Via: "cli"}))
				d.confirm(t, round.Confirm{CallID: "c2", Approve: false, Reason: "enough", ApprovalID: d.approvalID(t, "c2")})
			}},
		{name: "notify_webhooks", in: notifyWebhooks(), notify: true, want: map[string]round.Status{"g1": ok, "x1": skipped, "c1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "g1", "x1")
				d.confirm(t, round.Confirm{CallID: "g1", Approve: true, ApprovalID: d.approvalID(t, "g1")})
				d.confirm(t, round.Confirm{CallID: "x1", Approve: false, Reason: "not now", ApprovalID: d.approvalID(t, "x1")})
			}},
		{name: "counted_rules", in: countedRules(), want: map[string]round.Status{"g0": ok, "g1": ok, "g2": skipped, "g3": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "g0", "g1", "g2")
				d.confirm(t, round.Confirm{CallID: "g0", Approve: true, ApprovalID: d.approvalID(t, "g0"), Remember: true, Pattern: "git *", UpTo: 1})
				d.waitPending(t, "g2")
				d.confirm(t, round.Confirm{CallID: "g2", Approve: false, ApprovalID: d.approvalID(t, "g2")})
			}},
		{name: "inbox", in: inbox, want: map[string]round.Status{"e1": ok, "q1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1")
				d.confirm(t, round.Confirm{CallID: "e1", Approve: true})
				d.waitPending(t, "q1")
				d.signal(t, names.SignalAnswer, round.Answer{CallID: "q1", Answers: []string{"yes"}})
			}},
		// On a worker with WORKER_LIMITS (changeSignedUsage): a round of a
		// run whose usage verifies runs and signs what it hands on; one
		// whose usage carries no MAC asks for every call (B1).
		{name: "signed_usage", in: signedUsage(true), bounded: true, want: map[string]round.Status{"c1": ok, "c2": ok}},
		{name: "unsigned_usage", in: signedUsage(false), bounded: true, want: map[string]round.Status{"c1": skipped, "c2": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "c1", "c2")
				d.confirm(t, round.Confirm{CallID: "c1", Approve: false, Reason: "not sure", ApprovalID: d.approvalID(t, "c1")})
				d.confirm(t, round.Confirm{CallID: "c2", Approve: true, ApprovalID: d.approvalID(t, "c2"), By: "ann", Via: "cli"})
			}},
		// T15 (changeBoundUsage): round 2 takes the usage round 1 signed
		// for its round, which counts the rule git * up_to 2 once: g1 is
		// its second call, g2 asks and is denied; the usage handed on is
		// signed for round 2.
		{name: "bound_usage", in: boundUsage(), want: map[string]round.Status{"g1": ok, "g2": skipped, "c1": ok},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "g2")
				d.confirm(t, round.Confirm{CallID: "g2", Approve: false, Reason: "enough", ApprovalID: d.approvalID(t, "g2")})
			}},
		// T15 (changeFloorShares): two subagents of a run with max_calls 20
		// beside a calculate call get floor((20-3)/2) calls each.
		{name: "floor_shares", in: floorShares(), want: map[string]round.Status{"a1": ok, "a2": ok, "c1": ok}},
		// The same round under changeBaseline3: one marker for all.
		{name: "baseline3_live", in: scenarioInput("baseline3_live", live.Assistant.ToolCalls...), want: map[string]round.Status{"e1": ok, "e2": skipped},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "e2")
				require.NoError(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: d.approvalID(t, "e1")}))
				require.NoError(t, d.extend(t, round.Extend{CallID: "e2", Seconds: 60}))
				require.NoError(t, d.update(t, round.Confirm{CallID: "e2", Approve: false, ApprovalID: d.approvalID(t, "e2")}))
			}},
		// A round of a worker with WORKSPACE_PLACEMENT=host
		// (changePlacement): it binds its workspace, its file calls run on
		// the host's queue and the calculation anywhere (W4).
		{name: "workspace_placement", placed: true, in: placedRound("workspace_placement"),
			want: map[string]round.Status{"e1": ok, "r1": ok, "c1": ok}},
		// The same on a worker whose host has no poller: the file calls
		// never start and end workspace_unavailable (W5).
		{name: "workspace_unavailable", gone: true, in: placedRound("workspace_unavailable"),
			want: map[string]round.Status{"e1": round.StatusError, "r1": round.StatusError, "c1": ok}},
		// A round under changeBaseline4: its output leaves out the turn (H3).
		{name: "lean_output", in: scenarioInput("lean_output", live.Assistant.ToolCalls...), want: map[string]round.Status{"e1": ok, "e2": skipped},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "e2")
				require.NoError(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: d.approvalID(t, "e1")}))
				require.NoError(t, d.update(t, round.Confirm{CallID: "e2", Approve: false, ApprovalID: d.approvalID(t, "e2")}))
			}},
		// A result with an image (changeImages): s2 repeats s1 in the round.
		{name: "tool_images", in: toolImages, want: map[string]round.Status{"s1": ok, "s2": round.StatusDeduped, "c1": ok}},
		// Decisions published as they land (changeLiveDecisions), and the
		// extend update, refused for a call that does not wait.
		{name: "live_decisions", in: live, want: map[string]round.Status{"e1": ok, "e2": skipped},
			drive: func(t *testing.T, d *driver) {
				d.waitPending(t, "e1", "e2")
				require.NoError(t, d.update(t, round.Confirm{CallID: "e1", Approve: true, ApprovalID: d.approvalID(t, "e1")}))
				require.Error(t, d.extend(t, round.Extend{CallID: "e1", Seconds: 60}), "e1 no longer waits")
				require.NoError(t, d.extend(t, round.Extend{CallID: "e2", Seconds: 60}))
				require.NoError(t, d.update(t, round.Confirm{CallID: "e2", Approve: false, ApprovalID: d.approvalID(t, "e2")}))
			}},
	}
}

// TestRecordHistories runs every scenario through a real worker on the
// Temporal server and writes each history to testdata/<name>.json in the
// JSON of `temporal workflow show --output json`. It runs only with -record:
//
//	go test ./workflows -run TestRecordHistories -record
//
// Recorded histories are never re-recorded: record a new scenario alone,
// with -run TestRecordHistories/<name>.
func TestRecordHistories(t *testing.T) {
	if !*record {
		t.Skip("records histories only with -record")
	}
	c := testenv.TemporalClient(t, "recorder")

	rec := testtools.NewRecorder()
	rec.Files["a.txt"] = "hello"
	for i := range 20 {
		rec.Files[fmt.Sprintf("big%02d.txt", i)] = strings.Repeat(fmt.Sprintf("big file %02d ", i), 2700)
	}
	reg := testtools.Registry(rec)
	reg.MustRegister(extraTools(&attemptCounter{n: map[string]int{}})...)
	reg.MustRegister(lookTool(), shotTool(), agent.Subagents(), agent.TestTool(), agent.SendToChatbot())
	reg.MustRegister(askTools()...)
	reg.MustRegister(taskTools()...)
	cat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second,
		BuildID: "recorder-build", Chatbots: []round.Chatbot{{Name: "helper", Description: "Answers.", Tools: []string{"calculate"}}}})
	wf := &workflows.RoundWorkflow{Catalog: cat}
	acts := &activities.Activities{Registry: reg, Blobs: &testtools.MemBlobs{}, RuleKey: ruleKey, Client: c}
	queue := fmt.Sprintf("replay-record-%d", time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{Identity: "recorder"})
	// Subagents' runs (G1) call a model that answers at once.
	model := httptest.NewServer(http.HandlerFunc(answeringModel))
	defer model.Close()
	t.Setenv("LLM_BASE_URL", model.URL+"/v1")
	t.Setenv("LLM_MODEL", "scripted")
	engine.RegisterAll(w, wf, acts) // the round and its activities, as every worker registers them
	w.RegisterActivityWithOptions((&activities.Chatbots{Client: c, TaskQueue: queue}).Send, activity.RegisterOptions{Name: wire.ActivitySendToChatbot})
	require.NoError(t, w.Start())
	defer w.Stop()

	// A second worker whose rounds record webhook settings (N1): their
	// notification workflows post to no URL.
	notifyQueue := queue + "-notify"
	ncat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second,
		Notify: &workflows.NotifySettings{Retry: time.Minute}})
	nwf := &workflows.RoundWorkflow{Catalog: ncat}
	nw := worker.New(c, notifyQueue, worker.Options{Identity: "recorder-notify"})
	engine.RegisterAll(nw, nwf, acts) // the round and its activities, as every worker registers them
	nw.RegisterWorkflowWithOptions(notify.Workflow, workflow.RegisterOptions{Name: notify.WorkflowName})
	nw.RegisterActivityWithOptions((&notify.Notifier{}).Post, activity.RegisterOptions{Name: notify.ActivityPost})
	require.NoError(t, nw.Start())
	defer nw.Stop()

	// A third whose worker has WORKER_LIMITS (B1): its rounds verify and
	// sign the usage they carry.
	boundedQueue := queue + "-bounded"
	bcat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second,
		WorkerLimits: round.Limits{MaxCalls: 5}})
	bwf := &workflows.RoundWorkflow{Catalog: bcat}
	bw := worker.New(c, boundedQueue, worker.Options{Identity: "recorder-bounded"})
	engine.RegisterAll(bw, bwf, acts) // the round and its activities, as every worker registers them
	require.NoError(t, bw.Start())
	defer bw.Stop()

	// A fourth that runs every call as a regular activity, as a worker
	// without LOCAL_ACTIVITY_MAX_TIMEOUT does.
	regularQueue := queue + "-regular"
	rw := worker.New(c, regularQueue, worker.Options{Identity: "recorder-regular"})
	engine.RegisterAll(rw, &workflows.RoundWorkflow{Catalog: workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second})}, acts)
	require.NoError(t, rw.Start())
	defer rw.Stop()

	// Two with WORKSPACE_PLACEMENT=host (W4): one whose host queue a
	// worker serves, one whose host has none (W5). Both run the binding
	// workflow and its activities.
	placedQueue := queue + "-placed"
	pacts := &placement.Activities{Client: c, TaskQueue: placedQueue, Timeout: time.Minute}
	pcat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second,
		Placement: &workflows.PlacementSettings{TaskQueue: placedQueue, HostID: "host-a", HostTimeout: time.Minute}})
	pw := worker.New(c, placedQueue, worker.Options{Identity: "recorder-placed"})
	engine.RegisterAll(pw, &workflows.RoundWorkflow{Catalog: pcat}, acts)
	placement.Register(pw, pacts)
	require.NoError(t, pw.Start())
	defer pw.Stop()
	hw := worker.New(c, placement.HostQueue(placedQueue, "host-a"), worker.Options{Identity: "recorder-host-a"})
	hw.RegisterActivityWithOptions(acts.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	hw.RegisterActivityWithOptions(acts.CheckFiles, activity.RegisterOptions{Name: wire.ActivityCheckFiles})
	hw.RegisterActivityWithOptions(acts.Reconcile, activity.RegisterOptions{Name: wire.ActivityReconcile})
	require.NoError(t, hw.Start())
	defer hw.Stop()
	goneQueue := queue + "-gone"
	gcat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second,
		Placement: &workflows.PlacementSettings{TaskQueue: goneQueue, HostID: "host-gone", HostTimeout: 5 * time.Second}})
	gw := worker.New(c, goneQueue, worker.Options{Identity: "recorder-gone"})
	engine.RegisterAll(gw, &workflows.RoundWorkflow{Catalog: gcat}, acts)
	placement.Register(gw, &placement.Activities{Client: c, TaskQueue: goneQueue, Timeout: 5 * time.Second})
	require.NoError(t, gw.Start())
	defer gw.Stop()

	// A tool worker's queue (Y1): its tools join the registry as a
	// worker's do when it reads their catalog.
	toolQueue := queue + "-tools"
	tw := worker.New(c, toolQueue, worker.Options{Identity: "recorder-tools"})
	var decls []tools.Definition
	for _, tl := range userTools() {
		decls = append(decls, usertools.Definition(tl.Decl(), usertools.Queue{Name: toolQueue, Trusted: true}))
	}
	toolworker.Register(tw, userTools()...)
	// The secret user_tool_secrets sends: the worker's store holds it, the
	// tool worker holds its queue's key.
	secretKey := sha256.Sum256([]byte("recorder secret key"))
	store, err := secrets.NewStore(secretKey[:], secrets.StoreOptions{})
	require.NoError(t, err)
	require.NoError(t, store.Put(context.Background(), "replay-user_tool_secrets", "api", recordedSecret))
	acts.SecretStore = store
	t.Setenv(toolworker.EnvToolKey, base64.StdEncoding.EncodeToString(secrets.QueueKey(secretKey[:], toolQueue)))
	require.Empty(t, reg.SetQueue(toolQueue, decls))
	require.NoError(t, tw.Start())
	defer tw.Stop()

	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			id := sc.in.WorkflowID()
			q := queue
			if sc.notify {
				q = notifyQueue
			}
			if sc.bounded {
				q = boundedQueue
			}
			if sc.placed {
				q = placedQueue
			}
			if sc.gone {
				q = goneQueue
			}
			if sc.regular {
				q = regularQueue
			}
			if sc.placed || sc.gone { // a binding of an earlier recording runs on its queue, served no more
				_ = c.TerminateWorkflow(ctx, names.WorkspaceWorkflowID(sc.in.SessionID), "", "a new recording")
			}
			run, err := c.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: id, TaskQueue: q,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING}, names.WorkflowName, sc.in)
			require.NoError(t, err)
			if sc.drive != nil {
				sc.drive(t, &driver{c: c, wfID: id})
			}
			var out round.Output
			require.NoError(t, run.Get(ctx, &out))
			res := out.WithTurn(&sc.in).Result()
			requireEveryCallOnce(t, sc.in, res)
			got := map[string]round.Status{}
			for _, r := range res.Results {
				got[r.CallID] = r.Status
			}
			require.Equal(t, sc.want, got)

			testenv.WriteHistory(t, c, id, run.GetRunID(), filepath.Join(historyDir, sc.name+".json"))
		})
	}
}

// recordedSecret is the value user_tool_secrets sends, which its history
// never holds.
const recordedSecret = "v-recorded-5e1c9a"

// userTools are a tool worker's tools (Y1): a read-only lookup and a
// refund that refuses an amount that is not positive.
func userTools() []toolworker.Tool {
	type order struct {
		ID     string `json:"id"`
		Amount int    `json:"amount,omitempty"`
	}
	lookup := toolworker.New("user_lookup", func(_ context.Context, _ toolworker.Call, a order) (any, error) {
		return map[string]string{"id": a.ID, "status": "shipped"}, nil
	}, toolworker.ReadOnly(), toolworker.Timeouts(30*time.Second, 30*time.Second, 3*time.Second))
	refund := toolworker.New("user_refund", func(_ context.Context, call toolworker.Call, a order) (any, error) {
		if a.Amount <= 0 {
			return nil, &toolworker.ToolError{Message: "a refund needs a positive amount"}
		}
		return "refunded " + a.ID, nil
	}, toolworker.Timeouts(30*time.Second, 30*time.Second, 3*time.Second))
	return []toolworker.Tool{lookup, refund}
}

// placedRound is a round with two workspace calls and one that is not.
func placedRound(name string) round.Input {
	in := scenarioInput(name,
		call("e1", "edit_file", `{"path":"p.txt","new_text":"placed"}`),
		call("r1", "read_files", `{"paths":["a.txt"]}`),
		call("c1", "calculate", `{"expression":"2+3"}`))
	in.AutoApprove = true
	return in
}

// answeringModel is a chat-completions server whose every answer is
// "answered", streamed or not.
func answeringModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	msg := map[string]any{"role": "assistant", "content": "answered"}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range []any{map[string]any{"index": 0, "delta": msg}, map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}} {
		b, _ := json.Marshal(map[string]any{"choices": []any{c}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// subagentsRound runs two subagents with a limit to share (G1).
func subagentsRound() round.Input {
	in := scenarioInput("subagents", call("a1", "subagents", `{"task":"sum 1 and 2","name":"adder"}`),
		call("a2", "subagents", `{"task":"say hello","exclude_tools":["run_command"]}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 20}
	return in
}

// chatbotsRound sends the helper chatbot one message (G3).
func chatbotsRound() round.Input {
	in := scenarioInput("chatbots", call("k1", "send_to_chatbot", `{"name":"helper","message":"hi"}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "send_to_chatbot")
	return in
}

// failedAttempts calls a tool whose attempts all fail in passing and one
// whose attempts all time out, each three times.
func failedAttempts() round.Input {
	in := scenarioInput("failed_attempts", call("x1", "always_down", `{"n":1}`), call("x2", "always_late", `{"n":2}`),
		call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "always_down", "always_late")
	return in
}

// kindsRound calls a tool of each kind the recorder's worker has but the
// waits: a subagent, a chatbot, and calculate on the worker.
func kindsRound() round.Input {
	in := scenarioInput("kinds", call("a1", "subagents", `{"task":"sum 1 and 2","name":"adder"}`),
		call("k1", "send_to_chatbot", `{"name":"helper","message":"hi"}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "subagents", "send_to_chatbot")
	return in
}

// testToolRound tests script_probe twice with one input (G4).
func testToolRound() round.Input {
	in := scenarioInput("test_tool", call("t1", "test_tool", `{"name":"script_probe","input":{"n":1}}`),
		call("t2", "test_tool", `{"name":"script_probe","input":{"n":1}}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "test_tool")
	in.AutoApprove = true
	return in
}

// errorCode is a round whose write fails with workspace_full (W3).
func errorCode() round.Input {
	in := scenarioInput("error_code", call("f1", "fill_workspace", `{"n":1}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.AutoApprove = true
	return in
}

// runLimits is a round of a run that already made one call, with
// max_calls 2: c1 fits, g1 (which also needs an approval) and c2 wait as
// kind limit (B1).
func runLimits() round.Input {
	in := scenarioInput("run_limits",
		call("c1", "calculate", `{"expression":"1+1"}`),
		call("g1", "run_command", `{"command":"git status"}`),
		call("c2", "calculate", `{"expression":"2+2"}`),
	)
	in.Limits = &round.Limits{MaxCalls: 2, MaxCommands: 5}
	in.State.Usage = &round.Usage{Calls: 1}
	return in
}

// signedUsage is round 2 of a run that made one call, on a worker with
// WORKER_LIMITS: its usage signed with the worker's rule key (signed) or
// without a MAC (B1).
func signedUsage(signed bool) round.Input {
	name := "unsigned_usage"
	if signed {
		name = "signed_usage"
	}
	in := scenarioInput(name,
		call("c1", "calculate", `{"expression":"1+1"}`),
		call("c2", "calculate", `{"expression":"2+2"}`),
	)
	in.Round = 2
	in.State.Usage = &round.Usage{Calls: 1}
	if signed {
		in.State.Usage.MAC = approval.UsageMAC(ruleKey, in.SessionID, in.RunID, in.State.Usage.Canonical())
	}
	return in
}

// boundUsage is round 2 of a run whose round 1 remembered git * with
// up_to 2 and used it once (T15): the rule and the usage signed for round
// 1 with the worker's rule key.
func boundUsage() round.Input {
	in := scenarioInput("bound_usage",
		call("g1", "run_command", `{"command":"git log"}`),
		call("g2", "run_command", `{"command":"git diff"}`),
		call("c1", "calculate", `{"expression":"5"}`),
	)
	in.Round = 2
	rule := approval.Sign(ruleKey, in.SessionID, in.RunID, approval.Rule{Tool: "run_command", Pattern: "git *", UpTo: 2})
	in.State.Allow = []round.AllowRule{round.AllowRule(rule)}
	in.State.Usage = &round.Usage{Calls: 1, Commands: 1, Writes: 1, Rules: map[string]int64{workflows.RuleCountKey(rule): 1}, Round: 1}
	in.State.Usage.MAC = approval.RoundUsageMAC(ruleKey, in.SessionID, in.RunID, 1, in.State.Usage.Canonical())
	return in
}

// floorShares is the subagents round with max_calls 20 (T15).
func floorShares() round.Input {
	in := scenarioInput("floor_shares", call("a1", "subagents", `{"task":"sum 1 and 2","name":"adder"}`),
		call("a2", "subagents", `{"task":"say hello"}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 20}
	return in
}

// notifyWebhooks is a round on a worker with a webhook (N1): g1 and x1
// wait, each sends waiting, then decided when approved (g1) or denied (x1).
func notifyWebhooks() round.Input {
	return scenarioInput("notify_webhooks",
		call("g1", "run_command", `{"command":"git status"}`),
		call("x1", "run_command", `{"command":"rm -rf build"}`),
		call("c1", "calculate", `{"expression":"4"}`),
	)
}

// countedRules remembers git * with up_to 1 (B2): it approves g1, not g2;
// g3 is a read that needs nobody.
func countedRules() round.Input {
	return scenarioInput("counted_rules",
		call("g0", "run_command", `{"command":"git status"}`),
		call("g1", "run_command", `{"command":"git log"}`),
		call("g2", "run_command", `{"command":"git diff"}`),
		call("g3", "calculate", `{"expression":"3"}`),
	)
}
