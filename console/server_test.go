package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/console/openapi"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// fakeBackend answers from memory and records what it was asked.
type fakeBackend struct {
	mu        sync.Mutex
	submitted []*round.Input
	decisions []Decision
	answers   map[string][]string
	elicited  map[string]round.ElicitAnswer
	// toolResults are the client tools' results sent (Y5), by wf|call.
	toolResults map[string]round.ToolResult
	extended    map[string]int
	// extendRoom, when set, is what the 7-day cap leaves a call: an
	// extension adds no more (T3).
	extendRoom int
	cancelled  []string
	agents     []round.AgentInput
	messages   map[string][]string // by workflow id
	decideErr  map[string]error    // by call id
	inbox      []InboxEntry
	events     chan round.Event
	after      string // the last Events call's after
	// moreAgents are listed after agentrun/s1/done on the session's page.
	moreAgents []AgentView
}

func newFake() *fakeBackend {
	now := time.Now()
	return &fakeBackend{
		answers: map[string][]string{}, messages: map[string][]string{}, extended: map[string]int{}, decideErr: map[string]error{},
		events: make(chan round.Event, 10),
		inbox: []InboxEntry{{WorkflowID: "toolround/s1/r1/1", SessionID: "s1", Pending: []PendingCall{{
			CallID: "call_1", Tool: "edit_file", Kind: KindConfirm, ApprovalID: "abc",
			Arguments: `{"path":"notes.txt","old_text":"one\ntwo\n","new_text":"one\n2\n"}`,
			Reason:    "edit_file changes files", Since: now.Add(-90 * time.Second), Deadline: now.Add(28 * time.Minute),
		}}}},
	}
}

func (f *fakeBackend) Submit(_ context.Context, in *round.Input) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, in)
	return in.WorkflowID(), nil
}

func (f *fakeBackend) Wait(_ context.Context, id string) (*round.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.submitted); n > 0 && f.submitted[n-1].WorkflowID() == id && f.submitted[n-1].Format.Name() != round.FormatOpenAI {
		// A round in another format answers in it (F2), as the client's
		// result does.
		in := f.submitted[n-1]
		out := round.Output{WorkflowID: id, Format: in.Format, Turn: in.TurnJSON()}
		for _, c := range in.ToolCalls() {
			out.Results = append(out.Results, round.CallResult{CallID: c.ID, Tool: c.Function.Name, Status: round.StatusOK, Content: "done"})
		}
		res := out.Result()
		return &res, nil
	}
	return &round.Result{WorkflowID: id, Results: []round.CallResult{{CallID: "call_1", Status: round.StatusOK}}}, nil
}

func (f *fakeBackend) Round(_ context.Context, id string) (*RoundView, error) {
	switch id {
	case "toolround/s1/r1/1":
		return &RoundView{WorkflowID: id, SessionID: "s1", Status: StatusRunning, Pending: f.inbox[0].Pending, Progress: json.RawMessage(`{"phase":"confirm"}`)}, nil
	case "toolround/s1/r1/2":
		res, _ := f.Wait(context.Background(), id)
		return &RoundView{WorkflowID: id, SessionID: "s1", Status: StatusCompleted, Result: res}, nil
	}
	return nil, fmt.Errorf("round %s: %w", id, ErrNotFound)
}

func (f *fakeBackend) Inbox(_ context.Context, session string) ([]InboxEntry, error) {
	if session != "" && session != "s1" {
		return nil, nil
	}
	return f.inbox, nil
}

func (f *fakeBackend) Session(_ context.Context, session string) ([]RoundView, error) {
	return []RoundView{{WorkflowID: "toolround/s1/r1/1", SessionID: session, RunID: "r1", Round: 1, Status: StatusRunning,
		Pending: f.inbox[0].Pending, Calls: []CallView{{CallID: "call_1", Tool: "edit_file", State: "waiting"}}}}, nil
}

func (f *fakeBackend) Decide(_ context.Context, d Decision) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.decideErr[d.CallID]; err != nil {
		return err
	}
	f.decisions = append(f.decisions, d)
	return nil
}

func (f *fakeBackend) Answer(_ context.Context, wf, call string, answers []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[wf+"|"+call] = answers
	return nil
}

func (f *fakeBackend) AnswerElicitation(_ context.Context, wf string, a round.ElicitAnswer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.elicited == nil {
		f.elicited = map[string]round.ElicitAnswer{}
	}
	f.elicited[wf+"|"+a.CallID] = a
	return nil
}

func (f *fakeBackend) SubmitToolResult(_ context.Context, wf string, r round.ToolResult) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.WaitID == "stale" {
		return ErrStaleWait
	}
	if f.toolResults == nil {
		f.toolResults = map[string]round.ToolResult{}
	}
	f.toolResults[wf+"|"+r.CallID] = r
	return nil
}

func (f *fakeBackend) Extend(_ context.Context, wf, call string, seconds int) (round.Extended, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extended[wf+"|"+call] = seconds
	added := seconds
	if f.extendRoom > 0 {
		added = min(seconds, f.extendRoom)
	}
	return round.Extended{CallID: call, AddedSeconds: int64(added), Deadline: fakeDeadline}, nil
}

var fakeDeadline = time.Date(2026, 1, 8, 10, 0, 0, 0, time.UTC)

func (f *fakeBackend) Cancel(_ context.Context, wf string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, wf)
	return nil
}

// The fake's agent runs: agentrun/s1/live runs, agentrun/s1/done has
// completed, agentrun/s1/broke was terminated; the runs started are
// running.
func (f *fakeBackend) StartAgent(_ context.Context, in round.AgentInput) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agents = append(f.agents, in)
	return names.AgentWorkflowID(in.SessionID, in.RunID), nil
}

func (f *fakeBackend) Agent(_ context.Context, id string) (*AgentView, error) {
	switch id {
	case "agentrun/s1/live":
		return &AgentView{AgentStatus: round.AgentStatus{WorkflowID: id, Status: round.AgentRunning, Round: 1, ModelCalls: 1,
			Conversation: []round.AgentMessage{{Role: "user", Content: "go"}}}}, nil
	case "agentrun/s1/done":
		return &AgentView{AgentStatus: round.AgentStatus{WorkflowID: id, Status: round.AgentCompleted, Round: 1, ModelCalls: 2, Final: "42",
			Conversation: []round.AgentMessage{{Role: "user", Content: "go"}, {Role: "assistant", Content: "42"}}}}, nil
	case "agentrun/s1/broke":
		return &AgentView{AgentStatus: round.AgentStatus{WorkflowID: id, Status: StatusFailed}, Error: "the agent run terminated"}, nil
	}
	return nil, fmt.Errorf("agent run %s: %w", id, ErrNotFound)
}

func (f *fakeBackend) SessionAgents(ctx context.Context, session string) ([]AgentView, error) {
	if session != "s1" {
		return nil, nil
	}
	done, _ := f.Agent(ctx, "agentrun/s1/done")
	return append([]AgentView{*done}, f.moreAgents...), nil
}

// OpenWorkflows: no session of the fake has a round open.
func (f *fakeBackend) OpenWorkflows(context.Context, string) ([]string, error) { return nil, nil }

func (f *fakeBackend) MoveWorkspace(_ context.Context, _, host string) (placement.Binding, error) {
	if host == "dead" {
		return placement.Binding{}, temporal.NewNonRetryableApplicationError("host dead has no worker polling q@dead within the host timeout", placement.ErrTypeHostUnavailable, nil)
	}
	return placement.Binding{Host: host, Generation: 2}, nil
}

func (f *fakeBackend) SendUserMessage(_ context.Context, id, text string) error {
	switch id {
	case "agentrun/s1/done":
		return fmt.Errorf("agent run %s: %w", id, ErrNotRunning)
	case "agentrun/s1/live":
	default:
		return fmt.Errorf("agent run %s: %w", id, ErrNotFound)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages[id] = append(f.messages[id], text)
	return nil
}

func (f *fakeBackend) Events(ctx context.Context, _, after string, ready func(), fn func(round.Event) error) error {
	f.mu.Lock()
	f.after = after
	f.mu.Unlock()
	ready()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-f.events:
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

const (
	approverToken = "approver-token-0123456789"
	agentToken    = "agent-token-0123456789abc"
)

func newTestServer(t *testing.T) (*httptest.Server, *fakeBackend) {
	t.Helper()
	f := newFake()
	s, err := New(Options{Backend: f, Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover},
		{Secret: agentToken, Name: "bot", Role: RoleAgent},
	}, MaxRoundBody: 64 << 10})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, f
}

func do(t *testing.T, ts *httptest.Server, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(b) > 0 && b[0] == '{' {
		require.NoError(t, json.Unmarshal(b, &out), string(b))
	}
	return resp.StatusCode, out
}

const roundBody = `{"session_id":"s1","run_id":"r1","round":3,"provider":"openai","assistant":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculate","arguments":"{\"expression\":\"1+1\"}"}}]}}`

func TestAuthentication(t *testing.T) {
	ts, _ := newTestServer(t)
	for _, tok := range []string{"", "wrong-token-0123456789"} {
		code, body := do(t, ts, "GET", "/api/v1/inbox", tok, "")
		require.Equal(t, http.StatusUnauthorized, code)
		require.Equal(t, "unauthorized", body["error"])
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/inbox", nil)
	req.Header.Set("Authorization", "Basic "+approverToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	code, _ := do(t, ts, "GET", "/api/v1/inbox", agentToken, "")
	require.Equal(t, http.StatusOK, code)
}

func TestRolesH1(t *testing.T) {
	ts, f := newTestServer(t)
	for _, path := range []string{"/api/v1/approvals", "/api/v1/answers", "/api/v1/extend", "/api/v1/cancel"} {
		code, body := do(t, ts, "POST", path, agentToken, `{"workflow_id":"toolround/s1/r1/1","call_id":"call_1","approve":true}`)
		require.Equal(t, http.StatusForbidden, code, path)
		require.Equal(t, "forbidden", body["error"])
	}
	auto := strings.Replace(roundBody, `"provider"`, `"auto_approve":true,"provider"`, 1)
	code, body := do(t, ts, "POST", "/api/v1/rounds", agentToken, auto)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body["message"], "auto_approve")
	code, _ = do(t, ts, "POST", "/api/v1/rounds", approverToken, auto)
	require.Equal(t, http.StatusAccepted, code)
	require.Empty(t, f.decisions)
}

func TestSubmitH2(t *testing.T) {
	ts, f := newTestServer(t)
	code, body := do(t, ts, "POST", "/api/v1/rounds", agentToken, roundBody)
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "toolround/s1/r1/3", body["workflow_id"])
	require.Len(t, f.submitted, 1)

	code, body = do(t, ts, "POST", "/api/v1/rounds?wait=1", agentToken, roundBody)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "toolround/s1/r1/3", body["workflow_id"])
	require.Len(t, body["results"], 1)

	for _, bad := range []string{`{`, `[]`, `{"session_id":"s1"}`, `{"session_id":"s1","run_id":"r","round":"x"}`} {
		code, body = do(t, ts, "POST", "/api/v1/rounds", agentToken, bad)
		require.Equal(t, http.StatusBadRequest, code, bad)
		require.Equal(t, "bad_request", body["error"])
		require.NotEmpty(t, body["message"])
	}
	big := strings.Replace(roundBody, `"content":""`, `"content":"`+strings.Repeat("x", 70<<10)+`"`, 1)
	code, body = do(t, ts, "POST", "/api/v1/rounds", agentToken, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, "too_large", body["error"])
}

// F1, F2 through the API: rounds in format anthropic and responses are
// taken, answered in their format (validated against the document like
// every response), and a mixed shape is 400 invalid_input naming the field.
func TestSubmitFormatsF1(t *testing.T) {
	ts, f := newTestServer(t)
	anthropic := `{"session_id":"s1","run_id":"r1","round":4,"format":"anthropic","assistant":{"role":"assistant","stop_reason":"tool_use",
		"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"1+1"}}]}}`
	code, body := do(t, ts, "POST", "/api/v1/rounds?wait=1", agentToken, anthropic)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "anthropic", body["format"])
	msgs := body["messages"].([]any)
	require.Len(t, msgs, 1)
	block := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)
	require.Equal(t, "tool_result", block["type"])
	require.Equal(t, "toolu_1", block["tool_use_id"])
	require.Equal(t, false, block["is_error"])
	require.Equal(t, round.FormatAnthropic, f.submitted[len(f.submitted)-1].Format)

	responses := `{"session_id":"s1","run_id":"r1","round":5,"format":"responses","output":[
		{"type":"function_call","call_id":"call_9","name":"calculate","arguments":"{\"expression\":\"1+1\"}"}]}`
	code, body = do(t, ts, "POST", "/api/v1/rounds?wait=1", agentToken, responses)
	require.Equal(t, http.StatusOK, code, body)
	item := body["messages"].([]any)[0].(map[string]any)
	require.Equal(t, "function_call_output", item["type"])
	require.Equal(t, "call_9", item["call_id"])

	mixed := `{"session_id":"s1","run_id":"r1","round":6,"format":"responses","assistant":{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x"}}]},"output":[]}`
	code, body = do(t, ts, "POST", "/api/v1/rounds", agentToken, mixed)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "invalid_input", body["error"])
	require.Contains(t, body["message"], "format responses takes no assistant")

	typo := strings.Replace(anthropic, `"format":"anthropic"`, `"format":"antropic"`, 1)
	code, body = do(t, ts, "POST", "/api/v1/rounds", agentToken, typo)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "invalid_input", body["error"])
	require.Contains(t, body["message"], `format "antropic" is not one of openai, anthropic, responses; did you mean "anthropic"?`)
}

func TestRoundErrorsMapToStatuses(t *testing.T) {
	for err, want := range map[error]int{
		fmt.Errorf("x: %w", client.ErrInputTooLarge): 413,
		fmt.Errorf("x: %w", client.ErrInputMismatch): 409,
		fmt.Errorf("x: %w", ErrNotWaiting):           404,
		fmt.Errorf("x: %w", ErrStaleApproval):        409,
		fmt.Errorf("x: %w", ErrInvalidArgs):          400,
		fmt.Errorf("x: %w", ErrStaleWait):            409,
		fmt.Errorf("x: %w", ErrInvalidDecision):      400,
		fmt.Errorf("x: %w", ErrInvalidPattern):       400,
		fmt.Errorf("x: %w", client.ErrInvalidAnswer): 400,
		fmt.Errorf("x: %w", client.ErrLinkUsed):      409,
		fmt.Errorf("x: %w", ErrUnsupported):          501,
		fmt.Errorf("x: %w", client.ErrNoWorker):      503,
		fmt.Errorf("boom"):                           500,
	} {
		got, _ := statusOf(err)
		require.Equal(t, want, got, err.Error())
	}
}

// TestErrorCodesKeepTheirStatuses pins the table of codes: each error of
// the console, the client or round answers its code with its status.
func TestErrorCodesKeepTheirStatuses(t *testing.T) {
	want := map[string]int{"too_large": 413, "not_waiting": 404, "not_found": 404, "not_running": 409, "stale_approval": 409, "input_mismatch": 409,
		"stale_wait": 409, "link_used": 409, "workspace_busy": 409, "placement_off": 409, "host_unavailable": 409, "invalid_decision": 400, "invalid_pattern": 400, "invalid_args": 400, "invalid_answer": 400, "invalid_input": 400, "bad_request": 400, "not_implemented": 501, "no_worker": 503, "timeout": 504,
		"unauthorized": 401, "forbidden": 403, "csrf": 403, "method_not_allowed": 405, "internal": 500}
	for code, status := range want {
		require.Equal(t, status, statusFor(round.ErrorCode(code)), code)
	}
	require.Len(t, statuses, len(want)-1, "every code of the table is pinned here")
	for err, code := range map[error]string{
		ErrNotFound: "not_found", ErrNotRunning: "not_running", ErrNotWaiting: "not_waiting", ErrStaleApproval: "stale_approval",
		ErrInvalidArgs: "invalid_args", ErrBadInput: "bad_request", ErrUnsupported: "not_implemented", ErrWorkspaceBusy: "workspace_busy", ErrPlacementOff: "placement_off", ErrHostUnavailable: "host_unavailable",
		client.ErrInputTooLarge: "too_large", client.ErrInputMismatch: "input_mismatch", client.ErrNotWaiting: "not_waiting",
		client.ErrStaleApproval: "stale_approval", client.ErrInvalidArgs: "invalid_args",
		ErrInvalidPattern: "invalid_pattern", client.ErrInvalidPattern: "invalid_pattern",
		fmt.Errorf("%w: %w", ErrBadInput, round.ErrUnknownField): "invalid_input",
		&http.MaxBytesError{Limit: 1}:                            "too_large",
		fmt.Errorf("x: %w", context.DeadlineExceeded):            "timeout",
		client.ErrNoWorker:                                       "no_worker",
	} {
		status, got := statusOf(fmt.Errorf("x: %w", err))
		require.Equal(t, code, got, err.Error())
		require.Equal(t, want[code], status, err.Error())
	}
}

func TestReadRoundH3(t *testing.T) {
	ts, _ := newTestServer(t)
	code, body := do(t, ts, "GET", "/api/v1/rounds/toolround/s1/r1/1", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "running", body["status"])
	require.Len(t, body["pending"], 1)
	require.Equal(t, "confirm", body["progress"].(map[string]any)["phase"])

	code, body = do(t, ts, "GET", "/api/v1/rounds/toolround/s1/r1/2", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.NotNil(t, body["results"])

	code, body = do(t, ts, "GET", "/api/v1/rounds/toolround/nope/r/1", agentToken, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", body["error"])
}

func TestApprovalsH5(t *testing.T) {
	ts, f := newTestServer(t)
	code, body := do(t, ts, "POST", "/api/v1/approvals", approverToken,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"call_1","approval_id":"abc","approve":true,"remember":true,"pattern":"*.txt","args":{"path":"b.txt","new_text":"x"}}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, f.decisions, 1)
	d := f.decisions[0]
	require.Equal(t, Decision{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", ApprovalID: "abc", Approve: true, Remember: true, Pattern: "*.txt",
		By: "alice", Via: "api", Verified: true, Args: `{"new_text":"x","path":"b.txt"}`}, d)

	// args as a JSON string holding an object are accepted too.
	code, _ = do(t, ts, "POST", "/api/v1/approvals", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","approve":true,"args":"{\"a\":1}"}`)
	require.Equal(t, http.StatusOK, code)

	f.decideErr["gone"] = fmt.Errorf("x: %w", ErrNotWaiting)
	f.decideErr["stale"] = fmt.Errorf("x: %w", ErrStaleApproval)
	f.decideErr["bad"] = fmt.Errorf("x: %w", ErrInvalidArgs)
	for call, want := range map[string]struct {
		code int
		err  string
	}{"gone": {404, "not_waiting"}, "stale": {409, "stale_approval"}, "bad": {400, "invalid_args"}} {
		code, body := do(t, ts, "POST", "/api/v1/approvals", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"`+call+`","approval_id":"x","approve":false,"reason":"no"}`)
		require.Equal(t, want.code, code, call)
		require.Equal(t, want.err, body["error"], call)
	}
	// A decision that repeats the one the call got (a retry whose answer
	// was lost) answers 200 and says so (X2).
	f.decideErr["again"] = fmt.Errorf("confirm again: %w", client.ErrAlreadyDecided)
	code, body = do(t, ts, "POST", "/api/v1/approvals", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"again","approval_id":"x","approve":false,"reason":"no"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "already_decided", body["status"])
	require.Equal(t, "denied", body["decision"])
	code, body = do(t, ts, "POST", "/api/v1/approvals", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","approval_id":"x","approve":true}`)
	require.Equal(t, http.StatusOK, code, body)
	require.NotContains(t, body, "status", "a decision that lands now is not a repeat")
	for _, bad := range []struct{ body, err string }{
		{`{"workflow_id":"toolround/s1/r1/9","call_id":"c","approve":true,"args":[1]}`, "invalid_args"},
		{`{"workflow_id":"toolround/s1/r1/9","call_id":"c","approve":true,"args":"not json"}`, "invalid_args"},
		{`{"workflow_id":"toolround/s1/r1/9","call_id":"c","approve":false,"args":{"a":1}}`, "invalid_args"},
		{`{"workflow_id":"toolround/s1/r1/9","call_id":"c"}`, "bad_request"},
		{`{"call_id":"c","approve":true}`, "bad_request"},
		{`{"workflow_id":1}`, "bad_request"},
		{`nope`, "bad_request"},
	} {
		code, body := do(t, ts, "POST", "/api/v1/approvals", approverToken, bad.body)
		require.Equal(t, http.StatusBadRequest, code, bad.body)
		require.Equal(t, bad.err, body["error"], bad.body)
	}
	code, body = do(t, ts, "POST", "/api/v1/approvals", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","approve":true,"args":{"a":"`+strings.Repeat("x", 2<<20)+`"}}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, "too_large", body["error"])
}

func TestAnswersExtendCancelH6(t *testing.T) {
	ts, f := newTestServer(t)
	code, _ := do(t, ts, "POST", "/api/v1/answers", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","answers":["yes"]}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"yes"}, f.answers["toolround/s1/r1/9|c"])
	code, body := do(t, ts, "POST", "/api/v1/answers", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","answers":[]}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "bad_request", body["error"])

	code, body = do(t, ts, "POST", "/api/v1/extend", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","seconds":600}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 600, f.extended["toolround/s1/r1/9|c"])
	require.Equal(t, float64(600), body["extended_seconds"])
	require.Equal(t, "2026-01-08T10:00:00Z", body["deadline"])
	// The 7-day cap leaves 100 seconds: the answer says 100, not 600 (T3).
	f.mu.Lock()
	f.extendRoom = 100
	f.mu.Unlock()
	code, body = do(t, ts, "POST", "/api/v1/extend", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","seconds":600}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, float64(100), body["extended_seconds"])
	for _, s := range []string{"0", "-5", "604801", `"x"`} {
		code, _ = do(t, ts, "POST", "/api/v1/extend", approverToken, `{"workflow_id":"toolround/s1/r1/9","call_id":"c","seconds":`+s+`}`)
		require.Equal(t, http.StatusBadRequest, code, s)
	}

	code, _ = do(t, ts, "POST", "/api/v1/cancel", approverToken, `{"workflow_id":"toolround/s1/r1/9"}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"toolround/s1/r1/9"}, f.cancelled)
	code, _ = do(t, ts, "POST", "/api/v1/cancel", approverToken, `{}`)
	require.Equal(t, http.StatusBadRequest, code)
}

func TestUnknownPaths(t *testing.T) {
	ts, _ := newTestServer(t)
	var code int
	var body map[string]any
	code, body = do(t, ts, "GET", "/api/v1/nothing", agentToken, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", body["error"])
	for _, c := range [][2]string{{"GET", "/api/v1/approvals"}, {"DELETE", "/api/v1/rounds/toolround/s/r/1"}, {"POST", "/api/v1/inbox"}, {"PUT", "/api/v1/sessions/s1/events"},
		{"DELETE", "/api/v1/agents/agentrun/s/r"}, {"PUT", "/api/v1/agents/agentrun/s/r/messages"}} {
		code, body = do(t, ts, c[0], c[1], agentToken, "")
		require.Equal(t, http.StatusMethodNotAllowed, code, c)
		require.Equal(t, "method_not_allowed", body["error"])
	}
}

func TestInboxH4(t *testing.T) {
	ts, _ := newTestServer(t)
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/inbox?session=other", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "[]\n", string(b))

	req, _ = http.NewRequest("GET", ts.URL+"/api/v1/inbox", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var entries []InboxEntry
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&entries))
	resp.Body.Close()
	require.Len(t, entries, 1)
	require.Equal(t, "s1", entries[0].SessionID)
	require.Equal(t, "abc", entries[0].Pending[0].ApprovalID)
}

func TestEventsH8(t *testing.T) {
	ts, f := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/sessions/s1/events", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	req.Header.Set("Last-Event-ID", "e0")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	f.mu.Lock()
	require.Equal(t, "e0", f.after, "a reconnecting reader resumes after its last event")
	f.mu.Unlock()
	ev := round.Event{ID: "e1", Type: round.EventToolResult, SessionID: "s1", CallID: "call_1", Status: round.StatusOK, Detail: "line\nbreak", Time: time.Unix(0, 0).UTC()}
	f.events <- ev
	r := bufio.NewReader(resp.Body)
	var data string
	for data == "" {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = strings.TrimSpace(d)
		}
	}
	want, _ := json.Marshal(ev)
	require.JSONEq(t, string(want), data)
}

// browser is a cookie-keeping client that does not follow redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([0-9a-f]+)"`)

func signIn(t *testing.T, ts *httptest.Server, c *http.Client, token string) string {
	t.Helper()
	resp, err := c.PostForm(ts.URL+"/login", url.Values{"token": {token}, "return": {"/"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	var ck *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == cookieName {
			ck = k
		}
	}
	require.NotNil(t, ck)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	resp, err = c.Get(ts.URL + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := csrfMeta.FindStringSubmatch(string(b))
	require.NotNil(t, m, string(b))
	return m[1]
}

func TestPageSignInAndCSRF(t *testing.T) {
	ts, f := newTestServer(t)
	c := browser(t)

	resp, err := c.Get(ts.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))

	resp, err = c.PostForm(ts.URL+"/login", url.Values{"token": {"nope-nope-nope-nope"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	csrf := signIn(t, ts, c, approverToken)
	form := url.Values{"workflow_id": {"toolround/s1/r1/1"}, "call_id": {"call_1"}, "approval_id": {"abc"}, "decision": {"deny"},
		"reason": {"not now"}, "return": {"/sessions/s1"}}

	// Without the CSRF token: refused, nothing decided.
	resp, err = c.PostForm(ts.URL+"/api/v1/approvals", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	form.Set("csrf", otherToken(csrf))
	resp, err = c.PostForm(ts.URL+"/api/v1/approvals", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, f.decisions)

	form.Set("csrf", csrf)
	resp, err = c.PostForm(ts.URL+"/api/v1/approvals", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/sessions/s1", resp.Header.Get("Location"))
	require.Len(t, f.decisions, 1)
	require.Equal(t, Decision{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", ApprovalID: "abc", Reason: "not now", By: "alice", Via: "console", Verified: true}, f.decisions[0])

	// The page's script: JSON answer, header token; edited arguments only
	// when they changed.
	// The other forms without script: answers and extend.
	resp, err = c.PostForm(ts.URL+"/api/v1/answers", url.Values{"csrf": {csrf}, "workflow_id": {"toolround/s1/r1/9"}, "call_id": {"q"}, "answers": {"yes", "no"}, "return": {"/"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, []string{"yes", "no"}, f.answers["toolround/s1/r1/9|q"])
	resp, err = c.PostForm(ts.URL+"/api/v1/extend", url.Values{"csrf": {csrf}, "workflow_id": {"toolround/s1/r1/9"}, "call_id": {"q"}, "seconds": {"soon"}, "return": {"/"}})
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(page), "seconds must be a whole number", "a plain form gets its error as a page")

	form = url.Values{"workflow_id": {"toolround/s1/r1/9"}, "call_id": {"c"}, "decision": {"approve_edited"}, "args": {`{"a": 2}`}, "original_args": {`{"a":1}`}}
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/approvals", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `{"a":2}`, f.decisions[1].Args)
	require.True(t, f.decisions[1].Approve)

	// A bearer request needs no CSRF token even with a cookie around.
	code, _ := do(t, ts, "POST", "/api/v1/cancel", approverToken, `{"workflow_id":"toolround/s1/r1/9"}`)
	require.Equal(t, http.StatusOK, code)

	// A redirect target off the site is not followed.
	require.Equal(t, "/", localPath("//evil.example/x"))
	require.Equal(t, "/", localPath("https://evil.example/"))

	// Sign out ends the session.
	resp, err = c.PostForm(ts.URL+"/logout", url.Values{"csrf": {csrf}})
	require.NoError(t, err)
	resp.Body.Close()
	resp, err = c.Get(ts.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

func TestPagesRender(t *testing.T) {
	ts, b := newTestServer(t)
	c := browser(t)
	signIn(t, ts, c, approverToken)
	get := func(path string) string {
		resp, err := c.Get(ts.URL + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		if !strings.HasPrefix(path, "/assets/") {
			require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
		}
		return string(b)
	}
	inbox := get("/")
	require.Contains(t, inbox, "<del>- two</del>")
	require.Contains(t, inbox, "<ins>+ 2</ins>")
	require.Contains(t, inbox, "waiting 1m 30s")
	require.Contains(t, inbox, `value="approve"`)
	require.NotContains(t, inbox, "http://", "no outside assets")
	require.NotContains(t, inbox, "https://")

	sess := get("/sessions/s1")
	require.Contains(t, sess, `data-session="s1"`)
	require.Contains(t, sess, "agentrun/s1/done")
	require.Contains(t, sess, "rounds: 1, model calls: 2: 42")
	require.Contains(t, sess, `data-status-for="toolround/s1/r1/1|call_1"`)
	call := get("/calls/toolround/s1/r1/1?call=call_1")
	require.Contains(t, call, "<ins>+ 2</ins>")

	// An ask_user call gets a field per question instead of approve/deny.
	b.inbox[0].Pending = append(b.inbox[0].Pending, PendingCall{CallID: "q1", Tool: "ask_user", Kind: KindAnswer,
		Arguments: `{"questions":["Ship it?"]}`, Questions: []string{"Ship it?"}, Since: time.Now(), Deadline: time.Now().Add(time.Hour)})
	inbox = get("/")
	require.Contains(t, inbox, `action="/api/v1/answers"`)
	require.Regexp(t, `<label for="[^"]+-q0">Ship it\?</label>`, inbox)
	for _, a := range []string{"/assets/app.js", "/assets/style.css"} {
		get(a)
	}
	resp, err := c.Get(ts.URL + "/assets/layout.html")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// An agent token sees the inbox but no decision forms.
	c2 := browser(t)
	signIn(t, ts, c2, agentToken)
	resp, err = c2.Get(ts.URL + "/")
	require.NoError(t, err)
	agentPage, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NotContains(t, string(agentPage), `value="approve"`)
	require.Contains(t, string(agentPage), "needs an approver token")
}

func TestParseTokens(t *testing.T) {
	ts, err := ParseTokens(strings.NewReader("# people\nabcdefghijklmnop alice approver\n\nqrstuvwxyz012345 bot agent\n"))
	require.NoError(t, err)
	require.Equal(t, []Token{{Secret: "abcdefghijklmnop", Name: "alice", Role: "approver"}, {Secret: "qrstuvwxyz012345", Name: "bot", Role: "agent"}}, ts)
	for _, bad := range []string{"", "short bob agent", "abcdefghijklmnop bob admin", "abcdefghijklmnop bob"} {
		_, err := ParseTokens(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}

const agentBody = `{"session_id":"s1","run_id":"r9","task":"append a line to log.txt","max_rounds":5}`

func TestStartAgentH7(t *testing.T) {
	ts, f := newTestServer(t)
	code, body := do(t, ts, "POST", "/api/v1/agents", agentToken, agentBody)
	require.Equal(t, http.StatusAccepted, code, body)
	require.Equal(t, "agentrun/s1/r9", body["workflow_id"])
	require.Len(t, f.agents, 1)
	require.Equal(t, round.AgentInput{SessionID: "s1", RunID: "r9", Task: "append a line to log.txt", Provider: "openai", MaxRounds: 5}, f.agents[0],
		"the provider defaults to openai, as for starter agent")

	// An agent token never starts a run with auto_approve; an approver may.
	auto := strings.Replace(agentBody, `"max_rounds"`, `"auto_approve":true,"provider":"claude-code","max_rounds"`, 1)
	code, body = do(t, ts, "POST", "/api/v1/agents", agentToken, auto)
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "forbidden", body["error"])
	require.Len(t, f.agents, 1, "nothing started")
	code, _ = do(t, ts, "POST", "/api/v1/agents", approverToken, auto)
	require.Equal(t, http.StatusAccepted, code)
	require.Len(t, f.agents, 2)
	require.True(t, f.agents[1].AutoApprove)
	require.Equal(t, "claude-code", f.agents[1].Provider)

	code, _ = do(t, ts, "POST", "/api/v1/agents", "", agentBody)
	require.Equal(t, http.StatusUnauthorized, code)

	for _, bad := range []string{
		``, `not json`, `[]`, `{"session_id":"s1","run_id":"r9"}`, // no task
		`{"session_id":"s 1","run_id":"r9","task":"x"}`,
		`{"session_id":"s1","run_id":"r9","task":"x","max_rounds":-1}`,
		`{"session_id":"s1","run_id":"r9","task":"x","max_rounds":"5"}`,
		`{"session_id":"s1","run_id":"r9","task":"x"} {}`,
	} {
		code, body = do(t, ts, "POST", "/api/v1/agents", agentToken, bad)
		require.Equal(t, http.StatusBadRequest, code, bad)
		require.Equal(t, "bad_request", body["error"], bad)
		require.NotEmpty(t, body["message"], bad)
	}
	// The body limit of rounds (MaxRoundBody, 64 KiB in these tests).
	code, body = do(t, ts, "POST", "/api/v1/agents", agentToken, `{"session_id":"s1","run_id":"r9","task":"`+strings.Repeat("x", 100<<10)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, "too_large", body["error"])
	require.Len(t, f.agents, 2)
}

func TestReadAgentH7(t *testing.T) {
	ts, _ := newTestServer(t)
	code, body := do(t, ts, "GET", "/api/v1/agents/agentrun/s1/done", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "completed", body["status"])
	require.Equal(t, "42", body["final"])
	require.Len(t, body["conversation"], 2)
	require.NotContains(t, body, "error")

	code, body = do(t, ts, "GET", "/api/v1/agents/agentrun/s1/live", approverToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "running", body["status"])
	require.Equal(t, "agentrun/s1/live", body["workflow_id"])

	code, body = do(t, ts, "GET", "/api/v1/agents/agentrun/s1/broke", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "failed", body["status"])
	require.Equal(t, "the agent run terminated", body["error"])
	require.Equal(t, []any{}, body["conversation"])

	for _, id := range []string{"agentrun/s1/nothing", "toolround/s1/r1/1"} {
		code, body = do(t, ts, "GET", "/api/v1/agents/"+id, agentToken, "")
		require.Equal(t, http.StatusNotFound, code, id)
		require.Equal(t, "not_found", body["error"])
	}
	code, _ = do(t, ts, "GET", "/api/v1/agents/agentrun/s1/done", "", "")
	require.Equal(t, http.StatusUnauthorized, code)
}

func TestAgentMessagesAndCancel(t *testing.T) {
	ts, f := newTestServer(t)
	// An agent token may send a user message: it is conversation, not an
	// approval.
	code, body := do(t, ts, "POST", "/api/v1/agents/agentrun/s1/live/messages", agentToken, `{"text":"also say hi"}`)
	require.Equal(t, http.StatusOK, code, body)
	code, _ = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/live/messages", approverToken, `{"text":"and bye"}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"also say hi", "and bye"}, f.messages["agentrun/s1/live"])

	for _, bad := range []string{`{}`, `{"text":""}`, `{"text":"  "}`, `{"text":5}`, `nope`} {
		code, body = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/live/messages", agentToken, bad)
		require.Equal(t, http.StatusBadRequest, code, bad)
		require.Equal(t, "bad_request", body["error"], bad)
	}
	code, body = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/done/messages", agentToken, `{"text":"late"}`)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "not_running", body["error"])
	code, body = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/nothing/messages", agentToken, `{"text":"x"}`)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", body["error"])
	code, body = do(t, ts, "POST", "/api/v1/toolround/s1/r1/1/messages", agentToken, `{"text":"x"}`)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", body["error"])
	code, body = do(t, ts, "POST", "/api/v1/agents/toolround/s1/r1/1/messages", agentToken, `{"text":"x"}`)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "not_found", body["error"])
	// An agent run's own path takes GET, as the OpenAPI document says.
	code, body = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/live", agentToken, `{"text":"x"}`)
	require.Equal(t, http.StatusMethodNotAllowed, code)
	require.Equal(t, "method_not_allowed", body["error"])
	code, _ = do(t, ts, "POST", "/api/v1/agents/agentrun/s1/live/messages", "", `{"text":"x"}`)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Len(t, f.messages["agentrun/s1/live"], 2)

	// Cancelling a run is the approver's, as for rounds.
	code, _ = do(t, ts, "POST", "/api/v1/cancel", agentToken, `{"workflow_id":"agentrun/s1/live"}`)
	require.Equal(t, http.StatusForbidden, code)
	require.Empty(t, f.cancelled)
	code, _ = do(t, ts, "POST", "/api/v1/cancel", approverToken, `{"workflow_id":"agentrun/s1/live"}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"agentrun/s1/live"}, f.cancelled)
}

// TestUnknownFieldsRefusedU8: every JSON body refuses a field that is not
// part of its contract, with 400 invalid_input, the field's name and the
// closest known one, and reaches nothing behind the API.
func TestUnknownFieldsRefusedU8(t *testing.T) {
	ts, f := newTestServer(t)
	const wf = `"workflow_id":"toolround/s1/r1/1","call_id":"call_1"`
	cases := []struct{ path, body, want string }{
		{"/api/v1/rounds", `{"session_id":"s1","run_id":"r1","round":3,"asistant":{}}`,
			`unknown field "asistant" in the round input; did you mean "assistant"?`},
		{"/api/v1/rounds", `{"session_id":"s1","run_id":"r1","round":3,"assistant":{"tool_calls":[{"id":"a","function":{"nme":"x"}}]}}`,
			`unknown field "nme" in assistant.tool_calls[0].function of the round input; did you mean "name"?`},
		{"/api/v1/rounds", `{"session_id":"s1","run_id":"r1","round":3,"client_tools":[{"name":"ide","paramters":{}}]}`,
			`unknown field "paramters" in client_tools[0] of the round input; did you mean "parameters"?`},
		{"/api/v1/approvals", `{` + wf + `,"aprove":true}`, `unknown field "aprove" in the request; did you mean "approve"?`},
		{"/api/v1/approvals", `{` + wf + `,"approve":true,"rememebr":true}`, `unknown field "rememebr" in the request; did you mean "remember"?`},
		{"/api/v1/answers", `{` + wf + `,"answer":["yes"]}`, `unknown field "answer" in the request; did you mean "answers"?`},
		{"/api/v1/extend", `{` + wf + `,"secs":60}`, `unknown field "secs" in the request`},
		{"/api/v1/cancel", `{"workflowid":"toolround/s1/r1/1"}`, `unknown field "workflowid" in the request; did you mean "workflow_id"?`},
		{"/api/v1/agents", `{"session_id":"s1","run_id":"r9","tsak":"x"}`, `unknown field "tsak" in the request; did you mean "task"?`},
		{"/api/v1/agents", `{"session_id":"s1","run_id":"r9","task":"x","carry":{"round":3}}`, `unknown field "carry" in the request`},
		{"/api/v1/agents/agentrun/s1/live/messages", `{"txt":"hi"}`, `unknown field "txt" in the request; did you mean "text"?`},
		// Names match exactly and once (encoding/json folds case and keeps the last).
		{"/api/v1/rounds", `{"session_id":"s1","run_id":"r1","round":3,"Session_ID":"s2","assistant":{}}`,
			`unknown field "Session_ID" in the round input; did you mean "session_id"?`},
		{"/api/v1/rounds", `{"session_id":"s1","session_id":"s2","run_id":"r1","round":3,"assistant":{}}`,
			`duplicate field "session_id" in the round input`},
		{"/api/v1/approvals", `{` + wf + `,"Approve":true}`, `unknown field "Approve" in the request; did you mean "approve"?`},
		{"/api/v1/approvals", `{` + wf + `,"approve":false,"approve":true}`, `duplicate field "approve" in the request`},
		{"/api/v1/agents", `{"session_id":"s1","run_id":"r9","task":"x","Run_ID":"r8"}`, `unknown field "Run_ID" in the request; did you mean "run_id"?`},
	}
	for _, c := range cases {
		code, body := do(t, ts, "POST", c.path, approverToken, c.body)
		require.Equal(t, http.StatusBadRequest, code, c.body)
		require.Equal(t, "invalid_input", body["error"], c.body)
		require.Contains(t, body["message"], c.want, c.body)
	}
	f.mu.Lock()
	require.Empty(t, f.submitted)
	require.Empty(t, f.decisions)
	require.Empty(t, f.answers)
	require.Empty(t, f.extended)
	require.Empty(t, f.cancelled)
	require.Empty(t, f.agents)
	require.Empty(t, f.messages)
	f.mu.Unlock()

	// The corrected round, with the same number, is taken.
	code, body := do(t, ts, "POST", "/api/v1/rounds", approverToken, `{"session_id":"s1","run_id":"r1","round":3,"assistant":{}}`)
	require.Equal(t, http.StatusAccepted, code, body)
}

// otherToken is tok with its first character changed, so it never equals tok
// (a token that starts with "0" stays wrong too).
func otherToken(tok string) string {
	if strings.HasPrefix(tok, "0") {
		return "1" + tok[1:]
	}
	return "0" + tok[1:]
}

// TestToolsInEachFormatF3: GET /api/v1/tools gives a provider's built-in
// tools array in the format asked for, openai by default; an unknown format
// or a bad provider is 400, no token is 401.
func TestToolsInEachFormatF3(t *testing.T) {
	ts, _ := newTestServer(t)
	code, body := do(t, ts, "GET", "/api/v1/tools?provider=claude-code", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "openai", body["format"])
	require.Equal(t, "claude-code", body["provider"])
	first := body["tools"].([]any)[0].(map[string]any)
	require.Equal(t, "function", first["type"])
	require.Contains(t, first, "function")
	deferred := body["deferred"]

	code, body = do(t, ts, "GET", "/api/v1/tools?provider=claude-code&format=anthropic", approverToken, "")
	require.Equal(t, http.StatusOK, code)
	first = body["tools"].([]any)[0].(map[string]any)
	require.Contains(t, first, "input_schema")
	require.NotContains(t, first, "type")
	require.Equal(t, deferred, body["deferred"], "the deferred names are the same in every format")

	code, body = do(t, ts, "GET", "/api/v1/tools?provider=openai&format=responses", agentToken, "")
	require.Equal(t, http.StatusOK, code)
	first = body["tools"].([]any)[0].(map[string]any)
	require.Equal(t, false, first["strict"])
	require.Contains(t, first, "parameters")

	for _, q := range []string{"?provider=openai&format=xml", "?provider=openai&format=", "?provider=", "", "?provider=a%0Ab"} {
		code, body = do(t, ts, "GET", "/api/v1/tools"+q, agentToken, "")
		require.Equal(t, http.StatusBadRequest, code, q)
		require.Equal(t, "bad_request", body["error"], q)
	}
	code, body = do(t, ts, "GET", "/api/v1/tools?provider=claude_code", agentToken, "")
	require.Equal(t, http.StatusBadRequest, code, "a near miss of a known provider")
	require.Contains(t, body["message"], `did you mean "claude-code"?`)
	code, body = do(t, ts, "POST", "/api/v1/rounds", agentToken, `{"session_id":"s1","run_id":"r1","round":1,"provider":"claude_code","assistant":{"role":"assistant","content":""}}`)
	require.Equal(t, http.StatusBadRequest, code, "a round input too")
	require.Equal(t, "invalid_input", body["error"])
	require.Contains(t, body["message"], `did you mean "claude-code"?`)
	code, body = do(t, ts, "GET", "/api/v1/tools?provider=openai&format=anthropc", agentToken, "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body["message"], `did you mean "anthropic"?`)
	code, _ = do(t, ts, "GET", "/api/v1/tools?provider=openai", "", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = do(t, ts, "TRACE", "/api/v1/tools?provider=openai", agentToken, "")
	require.Equal(t, http.StatusMethodNotAllowed, code)
	require.Equal(t, "method_not_allowed", body["error"])
}

// TestEveryDocumentedPathRefusesOtherMethods: each path of the OpenAPI
// document answers 405 method_not_allowed, with an Allow header, to every
// method it does not list, so no route can be added without it (X1).
func TestEveryDocumentedPathRefusesOtherMethods(t *testing.T) {
	ts, _ := newTestServer(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openapi.JSON, &doc))
	fill := strings.NewReplacer("{session}", "s1", "{run}", "r1", "{round}", "1")
	require.Greater(t, len(doc.Paths), 10)
	for p, item := range doc.Paths {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
			if _, listed := item[strings.ToLower(m)]; listed {
				continue
			}
			req, err := http.NewRequest(m, ts.URL+fill.Replace(p), nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+approverToken)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", m, p)
			require.NotEmpty(t, resp.Header.Get("Allow"), "%s %s", m, p)
		}
	}
}

// TestApprovalsCarryTheScope (T12): POST /api/v1/approvals passes a
// remembered rule's scope to the round, and refuses a scope that is not one
// or comes without remember.
func TestApprovalsCarryTheScope(t *testing.T) {
	ts, f := newTestServer(t)
	code, body := do(t, ts, "POST", "/api/v1/approvals", approverToken,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"call_1","approval_id":"abc","approve":true,"remember":true,"pattern":"git status *","scope":"read-only"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, f.decisions, 1)
	require.Equal(t, "read-only", f.decisions[0].Scope)
	for _, bad := range []string{
		`{"workflow_id":"toolround/s1/r1/1","call_id":"call_1","approve":true,"remember":true,"scope":"everything"}`,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"call_1","approve":true,"scope":"write"}`,
	} {
		code, body = do(t, ts, "POST", "/api/v1/approvals", approverToken, bad)
		require.Equal(t, http.StatusBadRequest, code, bad)
		require.Equal(t, "invalid_decision", body["error"], bad)
	}
	require.Len(t, f.decisions, 1, "a refused scope decides nothing")
}

// TestCardChoosesTheScope (T12): the card offers a scope beside remember,
// and its form sends the choice with remember only.
func TestCardChoosesTheScope(t *testing.T) {
	ts, f := newTestServer(t)
	c := browser(t)
	csrf := signIn(t, ts, c, approverToken)
	resp, err := c.Get(ts.URL + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), `<select name="scope">`)
	require.Contains(t, string(page), `<option value="read-only">`)
	for _, remember := range []string{"1", ""} {
		form := url.Values{"csrf": {csrf}, "workflow_id": {"toolround/s1/r1/1"}, "call_id": {"call_1"}, "approval_id": {"abc"}, "decision": {"approve"},
			"remember": {remember}, "scope": {"read-only"}, "return": {"/"}}
		resp, err = c.PostForm(ts.URL+"/api/v1/approvals", form)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	}
	require.Len(t, f.decisions, 2)
	require.Equal(t, "read-only", f.decisions[0].Scope)
	require.True(t, f.decisions[0].Remember)
	require.Empty(t, f.decisions[1].Scope, "without remember the card's scope is not sent")
}

// TestCardSaysARuleRunsWorkspaceCode (T11): beside the remember control,
// the card of a command over a program that runs the workspace's code says
// that a rule over it is consent to run that code and is write; the card
// of any other call carries the notice hidden, for the page's script to
// show when the pattern typed names such a program.
func TestCardSaysARuleRunsWorkspaceCode(t *testing.T) {
	ts, f := newTestServer(t)
	f.inbox[0].Pending = append(f.inbox[0].Pending, PendingCall{CallID: "call_2", Tool: "run_command", Kind: KindConfirm, ApprovalID: "def",
		Arguments: `{"command":"python3 manage.py test"}`, Since: time.Now(), Deadline: time.Now().Add(time.Hour)})
	c := browser(t)
	signIn(t, ts, c, approverToken)
	resp, err := c.Get(ts.URL + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	notices := strings.Split(page, `<p class="notice workspace-code"`)
	require.Len(t, notices, 3, "one notice per card that can remember a rule")
	first, second := notices[1][:strings.Index(notices[1], "</p>")], notices[2][:strings.Index(notices[2], "</p>")]
	if !strings.Contains(first, `data-default=""`) {
		first, second = second, first
	}
	require.Contains(t, first, `data-default="" hidden>`, "edit_file's card hides it")
	require.NotContains(t, second, " hidden>")
	require.Contains(t, second, "python3 runs the workspace&#39;s code: a rule over it is consent to run whatever code the workspace holds")
	require.Contains(t, second, "its scope is always write")
	require.Contains(t, second, `data-programs="bash dash go make node npm python python3 sh"`)
	require.Contains(t, second, `data-template="{program} runs the workspace&#39;s code`)
	remember := strings.LastIndex(page, `name="remember"`)
	require.Less(t, remember, strings.LastIndex(page, `<p class="notice workspace-code"`), "the notice follows the remember control")
}
