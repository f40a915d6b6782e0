package client

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/round/names"
)

// searchSession is the session's search attribute, which Start sets.
var searchSession = temporal.NewSearchAttributeKeyKeyword(names.SearchSession)

// InboxRound is a round that waits for a person, with the calls it waits for.
type InboxRound struct {
	WorkflowID string `json:"workflow_id"`
	SessionID  string `json:"session_id"`
	// Started is when the round started; the inbox lists newest first.
	Started time.Time `json:"-"`
	// Pending are the calls that wait for a decision (KindConfirm) or an
	// answer (KindAnswer); a client tool's wait is not a person's.
	Pending []PendingCall `json:"pending"`
}

// InboxError is returned by Inbox, beside the rounds it could list, when
// some rounds that visibility says wait did not tell what they wait for (no
// worker polls their task queue, the query failed).
type InboxError struct {
	// Failed maps a round's workflow id to why it was skipped.
	Failed map[string]error
}

func (e *InboxError) Error() string {
	ids := make([]string, 0, len(e.Failed))
	for id := range e.Failed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id + ": " + e.Failed[id].Error()
	}
	return fmt.Sprintf("%d waiting rounds did not say what they wait for: %s", len(ids), strings.Join(parts, "; "))
}

// inboxQueryTimeout bounds the pending query of one round.
const inboxQueryTimeout = 5 * time.Second

// Inbox lists every running round that waits for a person, newest first,
// with its waiting calls; with a session, that session's only. It reads
// Temporal visibility (the ToolroundWaiting and ToolroundSession search
// attributes that rounds keep), then asks each round what it waits for.
// Visibility lags a round by a moment, so a round that just started or
// stopped waiting may be missing or listed without calls (it is then
// dropped). Rounds that cannot be asked are left out and reported in an
// *InboxError, returned with the others.
func (c *Client) Inbox(ctx context.Context, session string) ([]InboxRound, error) {
	return c.InboxOf(ctx, InboxOptions{Session: session})
}

// InboxOptions narrow InboxOf.
type InboxOptions struct {
	// Session keeps one session's rounds; "" every session's.
	Session string
	// TaskQueue keeps the rounds of one task queue; "" every queue's.
	TaskQueue string
}

// InboxOf is Inbox, of the rounds that o names.
func (c *Client) InboxOf(ctx context.Context, o InboxOptions) ([]InboxRound, error) {
	session := o.Session
	query := InboxQuery(session)
	if o.TaskQueue != "" {
		query += fmt.Sprintf(" AND TaskQueue = '%s'", escapeQuery(o.TaskQueue))
	}
	var found []InboxRound
	taskQueues := map[string]string{}
	var token []byte
	for {
		resp, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list waiting rounds (%s): %w", query, err)
		}
		for _, ex := range resp.GetExecutions() {
			r := InboxRound{WorkflowID: ex.GetExecution().GetWorkflowId(), Started: ex.GetStartTime().AsTime()}
			if p, ok := ex.GetSearchAttributes().GetIndexedFields()[names.SearchSession]; ok {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &r.SessionID)
			}
			if session != "" && r.SessionID != session {
				continue // the query language's escaping is not trusted to be exact
			}
			taskQueues[r.WorkflowID] = ex.GetTaskQueue()
			found = append(found, r)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Started.After(found[j].Started) })

	// Ask the rounds, a few at a time; a task queue without workers is
	// told once, not waited for per round.
	polled := map[string]error{}
	var mu sync.Mutex
	failed := map[string]error{}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range found {
		r := &found[i]
		tq := taskQueues[r.WorkflowID]
		if _, seen := polled[tq]; !seen {
			polled[tq] = c.requireWorkerOn(ctx, tq)
		}
		if err := polled[tq]; err != nil {
			failed[r.WorkflowID] = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			qctx, cancel := context.WithTimeout(ctx, inboxQueryTimeout)
			defer cancel()
			pending, err := c.queryPending(qctx, r.WorkflowID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[r.WorkflowID] = fmt.Errorf("pending query: %w", err)
				return
			}
			r.Pending = []PendingCall{}
			for _, p := range pending {
				if p.NeedsDecision() || p.Kind == KindAnswer || p.Kind == KindElicitation {
					r.Pending = append(r.Pending, p)
				}
			}
		}()
	}
	wg.Wait()
	out := make([]InboxRound, 0, len(found))
	for _, r := range found {
		if len(r.Pending) > 0 {
			out = append(out, r)
		}
	}
	if len(failed) > 0 {
		return out, &InboxError{Failed: failed}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, nil
}

// InboxQuery is the visibility query of Inbox: running rounds that wait for
// a person, of one session when session is not empty.
func InboxQuery(session string) string {
	q := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s = true", names.WorkflowName, names.SearchWaiting)
	if session != "" {
		q += fmt.Sprintf(" AND %s = '%s'", names.SearchSession, escapeQuery(session))
	}
	return q
}

// escapeQuery quotes a value for a string literal of the visibility query
// language (SQL's rules: a quote is doubled, a backslash escaped).
func escapeQuery(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s)
}

// IsInboxError reports whether err is only Inbox's report of rounds it
// skipped.
func IsInboxError(err error) bool {
	var ie *InboxError
	return errors.As(err, &ie)
}
