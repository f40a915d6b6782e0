package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// RunHandle is one run's rounds as an agent loop submits them (U9): it
// keeps the run state and the number of the last finished round, so that
// each Round is the next round of the run with the state the one before it
// returned. Its methods are safe for concurrent use; rounds go one at a
// time.
type RunHandle struct {
	c        *Client
	defaults round.Input

	mu     sync.Mutex
	number int
	state  *round.RunState
	last   *round.Result
}

// NewRun is the handle of a run that has no round yet. defaults gives what
// every round of the run shares (Provider, Format, AutoApprove,
// ClientTools, ConfirmTimeoutSeconds, MaxConcurrent, Dedupe, Limits); its
// session, run, round, turn and state are the handle's.
func (c *Client) NewRun(sessionID, runID string, defaults round.Input) *RunHandle {
	defaults.SessionID, defaults.RunID = sessionID, runID
	return &RunHandle{c: c, defaults: defaults}
}

// ErrRoundFailed is ResumeRun's error when the run's last round failed: the
// run cannot go on from a state it does not have.
var ErrRoundFailed error = &round.Error{Code: round.CodeRoundFailed, Message: "the run's last round failed"}

// ResumeRun reopens a run after the caller lost its handle (a crash, a new
// process): it finds the run's last round, follows it to its end when it
// still runs, and takes its number and run state. A run with no round
// gives a handle at round 0. When the last round failed it refuses with
// ErrRoundFailed, since its state is lost with it.
func (c *Client) ResumeRun(ctx context.Context, sessionID, runID string, defaults round.Input) (*RunHandle, error) {
	h := c.NewRun(sessionID, runID, defaults)
	for n := 1; ; n++ {
		id := names.WorkflowID(sessionID, runID, n)
		if _, _, err := c.describeRound(ctx, id); err != nil {
			if errors.Is(err, ErrRoundNotFound) {
				return h, nil
			}
			return nil, err
		}
		res, err := c.Result(ctx, id)
		if err != nil {
			if errors.Is(err, ErrRoundNotFound) {
				return h, nil
			}
			return nil, &round.Error{Code: round.CodeRoundFailed,
				Message: fmt.Sprintf("round %d of %s/%s failed, so the run cannot go on from its state: %v", n, sessionID, runID, err), Err: err}
		}
		h.finished(n, res)
	}
}

// Number is the last finished round's number (0 before the first).
func (h *RunHandle) Number() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.number
}

// State is the run state the last finished round returned (nil before
// the first).
func (h *RunHandle) State() *round.RunState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// Last is the last finished round's result (nil before the first).
func (h *RunHandle) Last() *round.Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// NextWorkflowID is the workflow id the next round will have.
func (h *RunHandle) NextWorkflowID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return names.WorkflowID(h.defaults.SessionID, h.defaults.RunID, h.number+1)
}

// Calls runs the model's chat-completions tool calls as the next round.
func (h *RunHandle) Calls(ctx context.Context, calls []round.ToolCall, opts ...RunOption) (*round.Result, error) {
	return h.Round(ctx, round.Input{Assistant: round.Message{Role: "assistant", ToolCalls: calls}}, opts...)
}

// Round runs the model's turn as the next round and returns its result, as
// Client.Run does. turn holds the turn in its format: Assistant (openai),
// or Format with Turn (anthropic) or Output (responses), as the SDK
// adapters build it; its other fields, when set, replace the handle's
// defaults for this round. The handle moves to the round only when it
// finished; after an error the same round can be submitted again (its
// workflow id makes a repeat attach to the same round, never run it twice).
func (h *RunHandle) Round(ctx context.Context, turn round.Input, opts ...RunOption) (*round.Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	in := h.defaults
	in.Round, in.State = h.number+1, h.state
	in.Assistant, in.Turn, in.Output = turn.Assistant, turn.Turn, turn.Output
	if turn.Format != "" {
		in.Format = turn.Format
	}
	if turn.Provider != "" {
		in.Provider = turn.Provider
	}
	if turn.AutoApprove {
		in.AutoApprove = true
	}
	if turn.ClientTools != nil {
		in.ClientTools = turn.ClientTools
	}
	if turn.ConfirmTimeoutSeconds != 0 {
		in.ConfirmTimeoutSeconds = turn.ConfirmTimeoutSeconds
	}
	if turn.MaxConcurrent != 0 {
		in.MaxConcurrent = turn.MaxConcurrent
	}
	if turn.Dedupe != nil {
		in.Dedupe = turn.Dedupe
	}
	if turn.Limits != nil {
		in.Limits = turn.Limits
	}
	res, err := h.c.Run(ctx, &in, opts...)
	if err != nil {
		return nil, err
	}
	h.number, h.state, h.last = in.Round, res.State, res
	return res, nil
}

func (h *RunHandle) finished(n int, res *round.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.number, h.state, h.last = n, res.State, res
}
