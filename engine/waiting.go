package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/round/names"
)

// The waiting-approval gauges read Temporal visibility at most once per
// waitingEvery per worker, each listing bounded by waitingTimeout, so that a
// scrape stays cheap and a slow server cannot hold it.
const (
	waitingEvery   = 10 * time.Second
	waitingTimeout = 3 * time.Second
)

// waitingQuery finds the rounds of a task queue that wait for a person, as
// the inbox does (T7), on the worker's namespace. A worker reports the
// rounds of its own task queue: deployments that share a namespace on
// other task queues are told apart.
func waitingQuery(taskQueue string) string {
	return fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s = true AND TaskQueue = '%s'",
		names.WorkflowName, names.SearchWaiting, strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(taskQueue))
}

// waitingNow is what visibility said of the rounds that wait for a person.
type waitingNow struct {
	Rounds int64
	Calls  int64
	// Oldest is when the oldest of their waiting calls began to wait; zero
	// when none waits.
	Oldest time.Time
}

// waitingApprovals keeps the last listing of the rounds that wait for a
// person for the gauges of observeWaiting.
type waitingApprovals struct {
	list    func(context.Context) (waitingNow, error)
	query   string // what list asks visibility, for the log
	every   time.Duration
	timeout time.Duration
	now     func() time.Time
	logger  *slog.Logger

	mu      sync.Mutex
	at      time.Time   // when the last listing was tried
	last    *waitingNow // nil when it failed
	failing bool        // the failure is logged; logged again after a success
	pending chan listed // the listing that runs now, if any
}

// listed is one listing's outcome.
type listed struct {
	now waitingNow
	err error
}

// current returns the cached listing, listing again when it is older than
// every. A listing that fails or times out gives nil (the gauges then
// report nothing) and is not tried again before every has passed.
//
// The listing runs in a goroutine of its own and current waits for it at
// most timeout: current runs inside the metrics SDK's callback, which holds
// the SDK pipeline's lock, and a listing that records a metric for the
// first time (the Temporal client does, into the same meter) needs that
// lock. Run inline it would wait for itself, and every later scrape with
// it; apart, it finishes once the scrape has given up on it.
func (w *waitingApprovals) current(ctx context.Context) *waitingNow {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if !w.at.IsZero() && now.Sub(w.at) < w.every {
		return w.last
	}
	w.at = now
	if w.pending != nil {
		select {
		case <-w.pending: // it finished after its scrape gave up: too old now
			w.pending = nil
		default: // still running: this scrape waits for it
		}
	}
	if w.pending == nil {
		ch := make(chan listed, 1)
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
			defer cancel()
			got, err := w.list(lctx)
			ch <- listed{got, err}
		}()
		w.pending = ch
	}
	// A listing that heeds its context ends by its timeout; the quarter
	// more is for one that cannot (the lock above), so that a slow server's
	// listing is always taken here and never left over for the next scrape.
	timer := time.NewTimer(w.timeout + w.timeout/4)
	defer timer.Stop()
	var r listed
	select {
	case r = <-w.pending:
		w.pending = nil
	case <-timer.C:
		r.err = fmt.Errorf("no answer within %s", w.timeout+w.timeout/4)
	}
	if r.err != nil {
		w.last = nil
		if !w.failing {
			w.failing = true
			w.logger.Warn("waiting approvals: cannot list the waiting rounds; their gauges report nothing until it works again",
				"query", w.query, "error", r.err)
		}
		return nil
	}
	if w.failing {
		w.failing = false
		w.logger.Info("waiting approvals: listing the waiting rounds works again")
	}
	w.last = &r.now
	return w.last
}

// listWaiting lists the rounds that wait for a person: how many, how many
// calls they wait for (ToolroundWaitingCalls), and when the oldest wait
// began (the memo ToolroundWaitingSince; the round's start time for a
// round recorded before it kept that memo).
func listWaiting(c client.Client, query string) func(context.Context) (waitingNow, error) {
	dc := converter.GetDefaultDataConverter()
	return func(ctx context.Context) (waitingNow, error) {
		var out waitingNow
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000, NextPageToken: token})
			if err != nil {
				return waitingNow{}, err
			}
			for _, ex := range resp.GetExecutions() {
				out.Rounds++
				var calls int64
				if p, ok := ex.GetSearchAttributes().GetIndexedFields()[names.SearchWaitingCalls]; ok && dc.FromPayload(p, &calls) == nil {
					out.Calls += calls
				}
				since := ex.GetStartTime().AsTime()
				if p, ok := ex.GetMemo().GetFields()[names.MemoWaitingSince]; ok {
					var t time.Time
					if dc.FromPayload(p, &t) == nil && !t.IsZero() {
						since = t
					}
				}
				if out.Oldest.IsZero() || since.Before(out.Oldest) {
					out.Oldest = since
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				return out, nil
			}
		}
	}
}

// observeWaiting registers the gauges of the rounds that wait for a person
// (METRICS_ADDR only): how many rounds and calls of the task queue wait,
// and how long the oldest has waited, labelled with the task queue. Every
// worker of a task queue reports the same values; a dashboard takes their
// max.
func observeWaiting(m metric.Meter, w *waitingApprovals, taskQueue string) error {
	tq := metric.WithAttributes(attribute.String("task_queue", taskQueue))
	rounds, err := m.Int64ObservableGauge("toolround_approvals_waiting_rounds",
		metric.WithDescription("Rounds that wait for a person (a decision or an ask_user answer), from Temporal visibility; refreshed at most every 10 s."))
	if err != nil {
		return err
	}
	calls, err := m.Int64ObservableGauge("toolround_approvals_waiting_calls",
		metric.WithDescription("Calls that wait for a person, summed over the waiting rounds (ToolroundWaitingCalls); refreshed at most every 10 s."))
	if err != nil {
		return err
	}
	oldest, err := m.Float64ObservableGauge("toolround_approval_oldest_wait",
		metric.WithUnit("s"),
		metric.WithDescription("How long the oldest call that still waits for a person has waited (since its pending entry's `since`); 0 when none waits."))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		now := w.current(ctx)
		if now == nil {
			return nil // the listing failed: the scrape goes on without them
		}
		o.ObserveInt64(rounds, now.Rounds, tq)
		o.ObserveInt64(calls, now.Calls, tq)
		age := 0.0
		if !now.Oldest.IsZero() {
			age = max(0, w.now().Sub(now.Oldest).Seconds())
		}
		o.ObserveFloat64(oldest, age, tq)
		return nil
	}, rounds, calls, oldest)
	return err
}
