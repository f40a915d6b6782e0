package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// Signal payloads are decoded into these copies of the round types: the
// error of a malformed payload names the type it was decoded into
// ("workflows.Confirm"), and recorded rounds keep that text in their
// signal_ignored events.
type (
	Confirm    round.Confirm
	Answer     round.Answer
	ToolResult round.ToolResult
	Extend     round.Extend
)

// openToClients sets what clients may ask and send from pass 1's end on,
// in this order: the queries (queries.go), the signals (listen), the
// approvals' updates, the MCP elicitations' handlers (elicit.go) and the
// client tools' results' update (toolresult.go).
func (r *run) openToClients(ctx workflow.Context) error {
	if err := r.setQueryHandlers(ctx); err != nil {
		return err
	}
	r.listen(ctx)
	if err := r.approvals.setUpdateHandlers(ctx); err != nil {
		return err
	}
	if err := r.setElicitHandlers(ctx); err != nil {
		return err
	}
	return r.setToolResultHandler(ctx)
}

// listen drains the round's signals in one coroutine: confirm decisions
// (gate.go), ask_user answers and client tools' results (execute.go).
// Payloads are decoded here so that a malformed one is recorded instead of
// dropped.
func (r *run) listen(ctx workflow.Context) {
	confirmCh := workflow.GetSignalChannel(ctx, names.SignalConfirm)
	answerCh := workflow.GetSignalChannel(ctx, names.SignalAnswer)
	resultCh := workflow.GetSignalChannel(ctx, names.SignalToolResult)
	elicitCh := workflow.GetSignalChannel(ctx, wire.SignalElicit)
	var extendCh workflow.ReceiveChannel
	if r.approvals.extends() {
		extendCh = workflow.GetSignalChannel(ctx, names.SignalExtend)
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(confirmCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var s Confirm
				if err := json.Unmarshal(raw, &s); err != nil {
					r.ignore(ctx, names.SignalConfirm, "", "malformed payload: "+err.Error())
					return
				}
				r.approvals.onConfirm(ctx, round.Confirm(s))
			})
			if extendCh != nil {
				sel.AddReceive(extendCh, func(c workflow.ReceiveChannel, _ bool) {
					var raw json.RawMessage
					c.Receive(ctx, &raw)
					var e Extend
					if err := json.Unmarshal(raw, &e); err != nil {
						r.ignore(ctx, names.SignalExtend, "", "malformed payload: "+err.Error())
						return
					}
					r.onExtend(ctx, round.Extend(e))
				})
			}
			sel.AddReceive(answerCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var a Answer
				if err := json.Unmarshal(raw, &a); err != nil {
					r.ignore(ctx, names.SignalAnswer, "", "malformed payload: "+err.Error())
					return
				}
				r.onExternal(ctx, names.SignalAnswer, round.KindAnswer, a.CallID, func(p *round.Pending) *wire.ExecuteOutput {
					return &wire.ExecuteOutput{Content: FormatAnswers(p.Questions, a.Answers)}
				})
			})
			sel.AddReceive(resultCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var t ToolResult
				if err := json.Unmarshal(raw, &t); err != nil {
					r.ignore(ctx, names.SignalToolResult, "", "malformed payload: "+err.Error())
					return
				}
				r.onExternal(ctx, names.SignalToolResult, round.KindToolResult, t.CallID, func(*round.Pending) *wire.ExecuteOutput {
					return &wire.ExecuteOutput{Content: t.Content, IsError: t.IsError}
				})
			})
			sel.AddReceive(elicitCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				r.onElicit(ctx, raw)
			})
			sel.Select(ctx)
		}
	})
}

// setUpdateHandlers registers the confirm update (T1): the same decision
// as the confirm signal, whose validator rejects, before anything is
// recorded, a call that does not wait, a stale approval_id and edited
// arguments that fail the schema; and a repeat of the decision that already
// landed as already_decided, so that a client's retry is told it did no
// harm (a rejection writes nothing to history).
//
// It also registers the extend update (T3), validated the same way: a call
// that does not wait for a decision, or fewer than one second, is refused.
// A handler writes no command, and no history recorded before it holds an
// extend update, so it needs no change id: old rounds replay as they ran.
func (r *run) setUpdateHandlers(ctx workflow.Context) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, names.UpdateConfirm,
		func(ctx workflow.Context, s round.Confirm) error {
			r.onConfirm(ctx, s, "update")
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, s round.Confirm) error {
			if how, ok := r.alreadyDecided(s); ok {
				return temporal.NewNonRetryableApplicationError("the call was already "+how+" with this approval_id; nothing changes", string(round.CodeAlreadyDecided), nil)
			}
			c, err := r.checkConfirm(s)
			if err != nil {
				return err
			}
			return r.checkPattern(c, s)
		}})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, names.UpdateExtend,
		func(ctx workflow.Context, e round.Extend) (round.Extended, error) {
			return r.onExtend(ctx, e), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, e round.Extend) error {
			if why := r.checkExtend(e); why != "" {
				code := string(round.CodeNotWaiting)
				if why == extendTooShort {
					code = string(round.CodeBadRequest)
				}
				return temporal.NewNonRetryableApplicationError(why, code, nil)
			}
			return nil
		}})
}

// checkPattern refuses, in the confirm update's validator, a pattern to
// remember that cannot be a rule for the call's tool (T4): the person is
// told why and nothing is decided, where onConfirm would approve the call
// and drop the rule. The signal keeps doing that, as it always did.
func (r *run) checkPattern(c *Call, s round.Confirm) error {
	if !s.Approve || !s.Remember || s.Pattern == "" {
		return nil
	}
	if err := approval.ValidatePatternAt(r.snap.Tables, r.snap.approvalOf(c).Kind, c.Tool, s.Pattern); err != nil {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("invalid pattern %q for %s: %v; nothing was decided", s.Pattern, c.Tool, err), string(round.CodeInvalidPattern), nil)
	}
	return nil
}

// ignore records a signal that changed nothing (P1.6): unknown call ids,
// repeated answers, malformed payloads. It never fails the round.
func (r *run) ignore(ctx workflow.Context, signal, callID, why string) {
	r.ignored++
	e := r.record(r.scope.SignalIgnored(workflow.Now(ctx), r.ignored, callID, signal+": "+why))
	workflow.GetLogger(ctx).Warn("signal ignored", "signal", signal, "call_id", callID, "why", why, "event", e.ID)
}

// onExternal hands an ask_user answer or a client tool's result to the call
// that waits for it (startExternal).
func (r *run) onExternal(ctx workflow.Context, signal, kind, callID string, result func(*round.Pending) *wire.ExecuteOutput) {
	i, known := r.index[callID]
	if !known || !r.calls[i].waitsFor(kind) {
		why := "no call with this id in the round"
		if known {
			why = "the call is not waiting for " + kind
		}
		r.ignore(ctx, signal, callID, why)
		return
	}
	c := &r.calls[i]
	c.answer = result(c.pending)
	r.notifyWait(c, c.pending, notify.TypeDecided, 0, strings.ReplaceAll(kind, "_", " ")+" arrived")
	c.pending = nil
}

// Questions reads the questions of an ask_user call.
func Questions(args string) []string {
	var a struct {
		Questions []string `json:"questions"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	return a.Questions
}

// FormatAnswers is an ask_user call's result: each question with its answer.
func FormatAnswers(questions, answers []string) string {
	if len(questions) == 0 {
		return strings.Join(answers, "\n")
	}
	var b strings.Builder
	for i, q := range questions {
		a := "(no answer)"
		if i < len(answers) && strings.TrimSpace(answers[i]) != "" {
			a = answers[i]
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Q: " + q + "\nA: " + a)
	}
	for _, extra := range answers[min(len(answers), len(questions)):] {
		b.WriteString("\n" + extra)
	}
	return b.String()
}

// alreadyDecided reports whether s repeats the decision a call no longer
// waiting got: the same approval_id, approve or deny as it was, and for an
// approval with edited arguments the arguments it runs with. how is
// "approved" or "denied".
func (r *run) alreadyDecided(s round.Confirm) (how string, ok bool) {
	i, known := r.index[s.CallID]
	if !known || r.calls[i].waitsForDecision() {
		return "", false
	}
	c := &r.calls[i]
	if c.Approval == nil || s.ApprovalID == "" || s.ApprovalID != c.ApprovalID {
		return "", false
	}
	want := round.DecisionDenied
	if s.Approve {
		want = round.DecisionApproved
	}
	if c.Approval.Decision != want {
		return "", false
	}
	if edited := len(s.Args) > 0; s.Approve && edited != c.Approval.Edited {
		return "", false // an approval as it was and one with edited arguments differ
	} else if s.Approve && edited {
		args, ok := editedArgs(s.Args)
		if !ok || Canonical(args) != Canonical(c.Args) {
			return "", false
		}
	}
	return want, true
}
