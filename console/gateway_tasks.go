package console

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// MCP tasks on revision 2025-11-25 (Z3), which the SDK's server does not
// serve: this layer in front of it answers a task-augmented tools/call
// with a task at once, and tasks/get, tasks/result, tasks/list and
// tasks/cancel; it adds the tasks capability to initialize's answer and
// execution.taskSupport "optional" to every listed tool. A task's id is
// the round's workflow id and the call's id, so any console answers it,
// and every answer reads Temporal.

// tasksRevision is the revision whose core tasks this layer serves;
// from extensionRevision on, tasks are the extension tasksExtension,
// which a client declares on each request and the server grants.
const (
	tasksRevision     = "2025-11-25"
	extensionRevision = "2026-07-28"
	tasksExtension    = "io.modelcontextprotocol/tasks"
)

// taskPoll is the poll interval the gateway suggests.
const taskPoll = 2 * time.Second

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// wireTaskState is a Task of 2025-11-25.
type wireTaskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// taskID names a gateway call: its round's workflow id, then its call id.
func taskID(t round.GatewayTicket) string { return t.WorkflowID + "/" + t.CallID }

// parseTaskID is the round and call a task id names, when the round is
// one of session's gateway runs.
func parseTaskID(id, session string) (wfID, callID string, ok bool) {
	i := strings.LastIndexByte(id, '/')
	if i < 0 {
		return "", "", false
	}
	wfID, callID = id[:i], id[i+1:]
	parts := strings.Split(wfID, "/")
	if len(parts) != 4 || parts[0] != names.WorkflowIDPrefix || parts[1] != session ||
		!strings.HasPrefix(parts[2], names.GatewayPrefix) || !strings.HasPrefix(callID, "mcp_") {
		return "", "", false
	}
	if s, ok := names.SessionOfWorkflowID(wfID); !ok || s != session {
		return "", "", false
	}
	return wfID, callID, true
}

// intercept answers the requests this layer serves and rewrites the
// SDK's answers it extends; false hands the request to the SDK as it is.
func (g *gateway) intercept(w http.ResponseWriter, r *http.Request, p principal, session, run string, ts []gatewayTool) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "the request is too large", http.StatusRequestEntityTooLarge)
			return true
		}
		http.Error(w, "read the request: "+err.Error(), http.StatusBadRequest)
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req rpcRequest
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
		return false // a notification, a batch or bad JSON: the SDK says what is wrong
	}
	if req.Method == "" {
		// A response: the answer to one of the gateway's own
		// elicitation/create requests (2025-11-25), or nothing it asked.
		var resp struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(body, &resp) != nil || !strings.HasPrefix(resp.ID, elicitIDPrefix) {
			return false
		}
		g.elicitAnswer(r.Context(), p, session, run, resp.ID, resp.Result)
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	revision := r.Header.Get("MCP-Protocol-Version")
	var pm struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &pm)
	if v, _ := pm.Meta["io.modelcontextprotocol/protocolVersion"].(string); v != "" {
		revision = v
	}
	ext := revision >= extensionRevision && declaresTasks(pm.Meta)
	ctx := r.Context()
	switch req.Method {
	case "server/discover":
		g.rewrite(w, r, func(res map[string]any) {
			caps, _ := res["capabilities"].(map[string]any)
			if caps == nil {
				caps = map[string]any{}
				res["capabilities"] = caps
			}
			exts, _ := caps["extensions"].(map[string]any)
			if exts == nil {
				exts = map[string]any{}
				caps["extensions"] = exts
			}
			exts[tasksExtension] = map[string]any{}
		})
		return true
	case "initialize":
		g.noteInitialize(ctx, session, run, req.Params)
		g.rewrite(w, r, func(res map[string]any) {
			if res["protocolVersion"] != tasksRevision {
				return
			}
			caps, _ := res["capabilities"].(map[string]any)
			if caps == nil {
				caps = map[string]any{}
				res["capabilities"] = caps
			}
			caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
				"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		})
		return true
	case "tools/list":
		if revision != tasksRevision {
			return false
		}
		g.rewrite(w, r, func(res map[string]any) {
			tools, _ := res["tools"].([]any)
			for _, t := range tools {
				if m, ok := t.(map[string]any); ok {
					m["execution"] = map[string]any{"taskSupport": "optional"}
				}
			}
		})
		return true
	case "tools/call":
		who := p
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Task      json.RawMessage `json:"task"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return false
		}
		core := len(p.Task) > 0 && string(p.Task) != "null" && revision == tasksRevision
		if core || ext {
			g.createTask(ctx, w, req, session, run, ts, p.Name, p.Arguments, ext)
			return true
		}
		if revision != "" && revision < extensionRevision && g.elicitsOld(ctx, who, session, run) {
			g.callStreaming(ctx, w, req, who, session, run, ts)
			return true
		}
		return false
	case "tasks/update":
		// The gateway asks a client nothing (approvals come from approver
		// tokens), so there is nothing to answer.
		writeRPC(w, req.ID, map[string]any{"resultType": "complete"}, nil)
		return true
	case "tasks/get", "tasks/result", "tasks/cancel":
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(req.Params, &p)
		wfID, callID, ok := parseTaskID(p.TaskID, session)
		if !ok {
			writeRPC(w, req.ID, nil, &rpcError{Code: -32602, Message: fmt.Sprintf("no task %q in this session", p.TaskID)})
			return true
		}
		switch req.Method {
		case "tasks/get":
			st, err := g.taskState(ctx, wfID, callID)
			if err == nil && revision >= extensionRevision {
				writeRPC(w, req.ID, g.extensionView(ctx, session, st, wfID, callID), nil)
				return true
			}
			writeRPC(w, req.ID, st, err)
		case "tasks/result":
			g.taskResult(ctx, w, req.ID, session, wfID, callID)
		default:
			g.cancelTask(ctx, w, req.ID, wfID, callID)
		}
		return true
	case "tasks/list":
		g.listTasks(ctx, w, req.ID, session, run)
		return true
	}
	return false
}

// rewrite runs the request through the SDK and edits the result of its
// answer before it goes out as JSON.
func (g *gateway) rewrite(w http.ResponseWriter, r *http.Request, edit func(map[string]any)) {
	rec := &recorder{header: http.Header{}}
	g.h.ServeHTTP(rec, r)
	msg := rec.body.Bytes()
	if strings.HasPrefix(rec.header.Get("Content-Type"), "text/event-stream") {
		msg = lastEvent(msg)
	}
	var m map[string]any
	if rec.code >= 300 || json.Unmarshal(msg, &m) != nil {
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(max(rec.code, http.StatusOK))
		_, _ = w.Write(rec.body.Bytes())
		return
	}
	if res, ok := m["result"].(map[string]any); ok {
		edit(res)
	}
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// lastEvent is the data of the last event of a server-sent stream.
func lastEvent(b []byte) []byte {
	var data, last []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				last, data = data, nil
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if len(data) > 0 {
		last = data
	}
	return []byte(strings.Join(last, "\n"))
}

// recorder keeps a response in memory.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, err error) {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		m["error"] = re
	case err != nil:
		m["error"] = &rpcError{Code: -32603, Message: err.Error()}
	default:
		m["result"] = result
	}
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (e *rpcError) Error() string { return e.Message }

// take resolves a tools/call of this layer (the tool its MCP name lists,
// its arguments made canonical) and hands it to the run's gateway workflow.
func (g *gateway) take(ctx context.Context, session, run string, ts []gatewayTool, name string, args json.RawMessage) (round.GatewayTicket, error) {
	tool := ""
	for _, t := range ts {
		if t.name == name {
			tool = t.t.Spec.Name
		}
	}
	if tool == "" {
		return round.GatewayTicket{}, &rpcError{Code: -32602, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	canon, err := canonicalJSON(args)
	if err != nil {
		return round.GatewayTicket{}, &rpcError{Code: -32602, Message: "the arguments are not a JSON object"}
	}
	t, err := g.b.GatewayCall(ctx, session, run, round.GatewayCall{Tool: tool, Args: canon})
	if err != nil {
		return t, fmt.Errorf("the gateway could not take the call: %w", err)
	}
	return t, nil
}

// declaresTasks reports a request whose client declares the tasks
// extension in its _meta.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[tasksExtension]
	return ok
}

// extensionView is a task as the extension's tasks/get gives it: the
// task's fields with ttlMs and pollIntervalMs, and its result inline once
// completed, or its error once failed.
func (g *gateway) extensionView(ctx context.Context, session string, st *wireTaskState, wfID, callID string) map[string]any {
	v := map[string]any{"resultType": "complete", "taskId": st.TaskID, "status": st.Status, "statusMessage": st.StatusMessage,
		"createdAt": st.CreatedAt, "lastUpdatedAt": st.LastUpdatedAt, "ttlMs": nil, "pollIntervalMs": st.PollInterval}
	switch st.Status {
	case "completed", "cancelled":
		res, err := g.b.Wait(ctx, wfID)
		if err != nil {
			v["status"], v["error"] = "failed", &rpcError{Code: -32603, Message: err.Error()}
			return v
		}
		if out, ok := g.resultFor(ctx, session, round.GatewayTicket{WorkflowID: wfID, CallID: callID}, res); ok {
			v["result"] = out
		}
	case "failed":
		v["error"] = &rpcError{Code: -32603, Message: st.StatusMessage}
	}
	return v
}

// createTask hands the call to the run's gateway workflow and answers
// with its task at once: a CreateTaskResult (2025-11-25), or the
// extension's task result.
func (g *gateway) createTask(ctx context.Context, w http.ResponseWriter, req rpcRequest, session, run string, ts []gatewayTool, name string, args json.RawMessage, ext bool) {
	t, err := g.take(ctx, session, run, ts, name, args)
	if err != nil {
		writeRPC(w, req.ID, nil, err)
		return
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if ext {
		writeRPC(w, req.ID, map[string]any{"resultType": "task", "taskId": taskID(t), "status": "working",
			"statusMessage": "the call runs in round " + t.WorkflowID, "createdAt": now, "lastUpdatedAt": now,
			"ttlMs": nil, "pollIntervalMs": taskPoll.Milliseconds()}, nil)
		return
	}
	writeRPC(w, req.ID, map[string]any{"task": wireTaskState{TaskID: taskID(t), Status: "working",
		StatusMessage: "the call runs in round " + t.WorkflowID, CreatedAt: now, LastUpdatedAt: now,
		PollInterval: taskPoll.Milliseconds()}}, nil)
}

// taskState is a task as tasks/get gives it: working while its round
// runs (a call waiting for a person's decision included: the client has
// nothing to give), then completed, or failed when the round failed, or
// cancelled.
func (g *gateway) taskState(ctx context.Context, wfID, callID string) (*wireTaskState, error) {
	v, err := g.s.b.Round(ctx, wfID)
	if errors.Is(err, ErrNotFound) {
		return nil, &rpcError{Code: -32602, Message: "no such task"}
	}
	if err != nil {
		return nil, err
	}
	st := &wireTaskState{TaskID: wfID + "/" + callID, CreatedAt: v.StartTime.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: time.Now().UTC().Format(time.RFC3339Nano), PollInterval: taskPoll.Milliseconds()}
	found := false
	for _, c := range v.Calls {
		if c.CallID != callID {
			continue
		}
		found = true
		st.Status, st.StatusMessage = "working", c.State
		for _, p := range v.Pending {
			if p.CallID == callID {
				st.StatusMessage = "waiting for a person's decision in the console"
			}
		}
	}
	switch {
	case v.Status == "failed":
		st.Status, st.StatusMessage = "failed", v.Error
		if strings.Contains(strings.ToLower(v.Error), "cancel") {
			st.Status = "cancelled"
		}
	case v.Status == "completed" && v.Result != nil:
		st.Status = "completed"
		for _, r := range v.Result.Results {
			if r.CallID == callID {
				found = true
				st.StatusMessage = string(r.Status)
				if r.Status == round.StatusCancelled {
					st.Status = "cancelled"
				}
			}
		}
	}
	if !found {
		return nil, &rpcError{Code: -32602, Message: "no such task"}
	}
	return st, nil
}

// taskResult waits for the call's result (tasks/result).
func (g *gateway) taskResult(ctx context.Context, w http.ResponseWriter, id json.RawMessage, session, wfID, callID string) {
	res, err := g.b.Wait(ctx, wfID)
	if err != nil {
		writeRPC(w, id, nil, fmt.Errorf("round %s: %w", wfID, err))
		return
	}
	if out, ok := g.resultFor(ctx, session, round.GatewayTicket{WorkflowID: wfID, CallID: callID}, res); ok {
		out.Meta["io.modelcontextprotocol/related-task"] = map[string]any{"taskId": wfID + "/" + callID}
		writeRPC(w, id, out, nil)
		return
	}
	writeRPC(w, id, nil, &rpcError{Code: -32602, Message: "no such task"})
}

// cancelTask cancels the call's round (tasks/cancel): every call still
// gets a result, the cancelled ones "cancelled".
func (g *gateway) cancelTask(ctx context.Context, w http.ResponseWriter, id json.RawMessage, wfID, callID string) {
	st, err := g.taskState(ctx, wfID, callID)
	if err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	if st.Status != "working" {
		writeRPC(w, id, nil, &rpcError{Code: -32602, Message: "the task has ended (" + st.Status + "): it cannot be cancelled"})
		return
	}
	if err := g.s.b.Cancel(ctx, wfID); err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	st.Status, st.StatusMessage = "cancelled", "cancelled by request; its round gives every call a result"
	writeRPC(w, id, st, nil)
}

// listTasks lists the calls of the run's recent rounds (tasks/list).
func (g *gateway) listTasks(ctx context.Context, w http.ResponseWriter, id json.RawMessage, session, run string) {
	views, err := g.s.b.Session(ctx, session)
	if err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	tasks := []wireTaskState{}
	for _, v := range views {
		if v.RunID != names.GatewayRunID(run) {
			continue
		}
		for _, c := range v.Calls {
			st, err := g.taskState(ctx, v.WorkflowID, c.CallID)
			if err == nil {
				tasks = append(tasks, *st)
			}
		}
	}
	writeRPC(w, id, map[string]any{"tasks": tasks}, nil)
}
