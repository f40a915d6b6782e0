// Package testtools builds registries for engine tests: tools with the
// catalog's real names, flags and argument schemas, whose handlers record
// every run and work on an in-memory file map, so a test can count side
// effects exactly.
package testtools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/builtin"
)

// Recorder counts runs and tracks how many calls overlap.
type Recorder struct {
	mu       sync.Mutex
	Runs     map[string]int // call id -> runs
	Order    []string       // call ids in the order they started
	inFlight map[string]int // tool class -> running now
	Peak     map[string]int // tool class -> most running at once
	Files    map[string]string
	// Delay holds every handler for this long (the work a tool does).
	Delay time.Duration
	// Fail makes a tool return an error (by tool name).
	Fail map[string]error
	// Block, when set for a call id, holds that call until the channel closes
	// or the context ends.
	Block map[string]chan struct{}
	// Started receives the call id of every run.
	Started chan string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		Runs: map[string]int{}, inFlight: map[string]int{}, Peak: map[string]int{},
		Files: map[string]string{}, Fail: map[string]error{}, Block: map[string]chan struct{}{},
		Started: make(chan string, 10000),
	}
}

func (r *Recorder) enter(class, callID string) {
	r.mu.Lock()
	r.Runs[callID]++
	r.Order = append(r.Order, callID)
	r.inFlight[class]++
	r.inFlight["all"]++
	r.Peak[class] = max(r.Peak[class], r.inFlight[class])
	r.Peak["all"] = max(r.Peak["all"], r.inFlight["all"])
	r.mu.Unlock()
	r.Started <- callID
}

func (r *Recorder) leave(class string) {
	r.mu.Lock()
	r.inFlight[class]--
	r.inFlight["all"]--
	r.mu.Unlock()
}

// RunsOf is how many times a call ran.
func (r *Recorder) RunsOf(callID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Runs[callID]
}

// PeakOf is the most calls of a class ("concurrent", "serial", "all") that ran at once.
func (r *Recorder) PeakOf(class string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Peak[class]
}

// StartOrder is the call ids in the order they started.
func (r *Recorder) StartOrder() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.Order...)
}

func (r *Recorder) wrap(class string, fn func(ctx context.Context, req tools.Request) (tools.Result, error)) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		r.enter(class, req.CallID)
		defer r.leave(class)
		r.mu.Lock()
		block, delay := r.Block[req.CallID], r.Delay
		r.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-ctx.Done():
				return tools.Result{}, ctx.Err()
			}
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return tools.Result{}, ctx.Err()
			}
		}
		r.mu.Lock()
		err := r.Fail[req.Tool]
		r.mu.Unlock()
		if err != nil {
			return tools.Result{}, err
		}
		return fn(ctx, req)
	}
}

// Registry returns a registry with find_tools and test versions of
// read_files, find_files, edit_file, run_command, calculate, http_request,
// write_todo, reasoning_guide, chat_history, write_result and ask_user.
func Registry(r *Recorder) *tools.Registry {
	reg := tools.NewRegistry()
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		if required == nil {
			req = []byte("[]")
		}
		return tools.Schema(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
	}
	str := func(v string) func(json.RawMessage) string { return tools.SubjectField(v) }
	reg.MustRegister(
		builtin.FindTools(reg),
		tools.Definition{
			Name: "read_files", Description: "Read files.", Concurrent: true, SideEffect: tools.ReadOnly, Source: tools.SourceBuiltin,
			Rules: approval.KindPath, ReadsPaths: true,
			Parameters: obj(`"paths":{"type":"array","items":{"type":"string"},"minItems":1}`, "paths"),
			Sensitive: func(args json.RawMessage) bool {
				var a struct{ Paths []string }
				_ = json.Unmarshal(args, &a)
				for _, p := range a.Paths {
					if tools.SensitivePath(p) {
						return true
					}
				}
				return false
			},
			Handler: r.wrap("concurrent", tools.Typed(func(_ context.Context, req tools.Request, a struct{ Paths []string }) (tools.Result, error) {
				var out []string
				r.mu.Lock()
				defer r.mu.Unlock()
				for _, p := range a.Paths {
					c, ok := r.Files[p]
					if !ok {
						return tools.Result{}, fmt.Errorf("read_files: %s: no such file", p)
					}
					out = append(out, p+": "+c)
				}
				return tools.Text(strings.Join(out, "\n")), nil
			})),
		},
		tools.Definition{
			Name: "find_files", Description: "Find files by glob.", Concurrent: true, SideEffect: tools.ReadOnly, Volatile: true, Source: tools.SourceBuiltin,
			Parameters: obj(`"pattern":{"type":"string"},"path":{"type":"string"}`, "pattern"),
			Handler: r.wrap("concurrent", func(context.Context, tools.Request) (tools.Result, error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				names := make([]string, 0, len(r.Files))
				for n := range r.Files {
					names = append(names, n)
				}
				sort.Strings(names)
				return tools.Text(strings.Join(names, "\n")), nil
			}),
		},
		tools.Definition{
			Name: "edit_file", Description: "Create or edit a file.", SideEffect: tools.AtMostOnce, Subject: str("path"), Source: tools.SourceBuiltin,
			Rules: approval.KindPath, Reason: "it changes {path}", TouchesPath: true,
			Parameters: obj(`"path":{"type":"string"},"new_text":{"type":"string"},"old_text":{"type":"string"}`, "path", "new_text"),
			Handler: r.wrap("serial", tools.Typed(func(_ context.Context, req tools.Request, a struct {
				Path, NewText, OldText string
			}) (tools.Result, error) {
				r.mu.Lock()
				r.Files[a.Path] = a.NewText
				r.mu.Unlock()
				return tools.Result{Content: "wrote " + a.Path, Touched: []string{a.Path}}, nil
			})),
		},
		tools.Definition{
			Name: "run_command", Description: "Run a shell command.", SideEffect: tools.AtMostOnce, Volatile: true, Subject: str("command"),
			Rules: approval.KindCommand, Reason: "it runs a shell command",
			Timeout: 5 * time.Minute, Source: tools.SourceBuiltin,
			Parameters: obj(`"command":{"type":"string","minLength":1},"timeout_seconds":{"type":"integer","minimum":1}`, "command"),
			Handler: r.wrap("serial", func(_ context.Context, req tools.Request) (tools.Result, error) {
				var a struct{ Command string }
				_ = req.Decode(&a)
				return tools.Text("ran: " + a.Command), nil
			}),
		},
		tools.Definition{
			Name: "calculate", Description: "Evaluate an arithmetic expression.", Concurrent: true, SideEffect: tools.ReadOnly, Source: tools.SourceBuiltin,
			Parameters: obj(`"expression":{"type":"string","minLength":1}`, "expression"),
			Handler: r.wrap("concurrent", func(_ context.Context, req tools.Request) (tools.Result, error) {
				var a struct{ Expression string }
				_ = req.Decode(&a)
				return tools.Text("= " + a.Expression), nil
			}),
		},
		tools.Definition{
			Name: "http_request", Description: "Make an HTTP request.", Concurrent: true, SideEffect: tools.AtMostOnce, Source: tools.SourceBuiltin,
			Rules:      approval.KindRequest,
			CacheKey:   tools.HTTPRequestCacheKey,
			Parameters: obj(`"url":{"type":"string"},"method":{"type":"string"},"headers":{"type":"object"},"body":{"type":"string"}`, "url"),
			Subject:    func(a json.RawMessage) string { return httpMethod(a) + " " + tools.SubjectField("url")(a) },
			Effect: func(a json.RawMessage) tools.SideEffect {
				if m := httpMethod(a); m == "GET" || m == "HEAD" {
					return tools.ReadOnly
				}
				return tools.AtMostOnce
			},
			Handler: r.wrap("concurrent", func(_ context.Context, req tools.Request) (tools.Result, error) {
				return tools.Text("200 OK from " + tools.SubjectField("url")(req.Args)), nil
			}),
		},
		tools.Definition{
			Name: "write_todo", Description: "Replace the todo list.", Concurrent: true, SideEffect: tools.Idempotent, Confirm: tools.ConfirmNever, Source: tools.SourceBuiltin,
			Parameters: obj(`"items":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"},"done":{"type":"boolean"}},"required":["text"]}}`, "items"),
			Handler:    r.wrap("concurrent", func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("todo saved"), nil }),
		},
		tools.Definition{
			Name: "reasoning_guide", Description: "Guidance on reasoning.", Concurrent: true, SideEffect: tools.ReadOnly, Source: tools.SourceBuiltin,
			Handler: r.wrap("concurrent", func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("think"), nil }),
		},
		tools.Definition{
			Name: "chat_history", Description: "Search the chat history.", Concurrent: true, SideEffect: tools.ReadOnly, Source: tools.SourceBuiltin,
			Handler: r.wrap("concurrent", func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("history"), nil }),
		},
		tools.Definition{
			Name: "write_result", Description: "Record the final result.", SideEffect: tools.Idempotent, Confirm: tools.ConfirmNever, Source: tools.SourceBuiltin,
			Parameters: obj(`"content":{"type":"string"}`, "content"),
			Handler:    r.wrap("serial", func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("recorded"), nil }),
		},
		tools.Definition{
			Name: "ask_user", Description: "Ask the user.", Interactive: true, SideEffect: tools.ReadOnly, Confirm: tools.ConfirmNever, Source: tools.SourceBuiltin,
			Parameters: obj(`"questions":{"type":"array","items":{"type":"string"},"minItems":1}`, "questions"),
			Handler: func(context.Context, tools.Request) (tools.Result, error) {
				return tools.Result{}, fmt.Errorf("ask_user runs inside a round")
			},
		},
	)
	return reg
}

func httpMethod(a json.RawMessage) string {
	m := strings.ToUpper(tools.SubjectField("method")(a))
	if m == "" {
		return "GET"
	}
	return m
}
