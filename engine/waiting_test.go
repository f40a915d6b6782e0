package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scrape serves /metrics once and returns the text.
func scrape(t *testing.T, tel *Telemetry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(body)
}

// TestWaitingGaugesListAtMostOncePerInterval: scrapes within the interval
// read the cached listing (one visibility query), the age of the oldest
// wait still grows with the clock between listings, and a scrape after the
// interval lists again.
func TestWaitingGaugesListAtMostOncePerInterval(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var lists atomic.Int32
	answer := waitingNow{Rounds: 2, Calls: 3, Oldest: clock.Add(-90 * time.Second)}
	w := &waitingApprovals{
		list: func(context.Context) (waitingNow, error) {
			lists.Add(1)
			return answer, nil
		},
		every: 10 * time.Second, timeout: time.Second, now: func() time.Time { return clock },
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	require.NoError(t, observeWaiting(tel.Meter, w, "tq"))

	body := scrape(t, tel)
	require.Contains(t, body, `toolround_approvals_waiting_rounds{task_queue="tq"} 2`+"\n")
	require.Contains(t, body, `toolround_approvals_waiting_calls{task_queue="tq"} 3`+"\n")
	require.Contains(t, body, `toolround_approval_oldest_wait_seconds{task_queue="tq"} 90`+"\n")
	require.EqualValues(t, 1, lists.Load())

	clock = clock.Add(9 * time.Second)
	answer = waitingNow{} // what a new listing would say
	body = scrape(t, tel)
	require.EqualValues(t, 1, lists.Load(), "a scrape within 10 s reads the cache")
	require.Contains(t, body, `toolround_approvals_waiting_rounds{task_queue="tq"} 2`+"\n")
	require.Contains(t, body, `toolround_approval_oldest_wait_seconds{task_queue="tq"} 99`+"\n", "the age grows between listings")

	clock = clock.Add(time.Second)
	body = scrape(t, tel)
	require.EqualValues(t, 2, lists.Load(), "10 s later it lists again")
	require.Contains(t, body, `toolround_approvals_waiting_rounds{task_queue="tq"} 0`+"\n")
	require.Contains(t, body, `toolround_approvals_waiting_calls{task_queue="tq"} 0`+"\n")
	require.Contains(t, body, `toolround_approval_oldest_wait_seconds{task_queue="tq"} 0`+"\n", "no round waits: 0")
}

// TestWaitingGaugesSurviveASlowOrFailingServer: a listing that hangs is cut
// at the timeout and one that fails is not retried within the interval; the
// scrape still answers with the other metrics and without the gauges, the
// failure is logged once, not per scrape, and the gauges come back when a
// listing works again.
func TestWaitingGaugesSurviveASlowOrFailingServer(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	other, err := tel.Meter.Int64Counter("toolround_other_test")
	require.NoError(t, err)
	other.Add(context.Background(), 1)

	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var lists atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	var logs bytes.Buffer
	w := &waitingApprovals{
		list: func(ctx context.Context) (waitingNow, error) {
			lists.Add(1)
			if fail.Load() {
				<-ctx.Done() // a server that does not answer
				return waitingNow{}, errors.Join(errors.New("list: deadline"), ctx.Err())
			}
			return waitingNow{Rounds: 1, Calls: 1, Oldest: clock.Add(-time.Hour)}, nil
		},
		every: 10 * time.Second, timeout: 100 * time.Millisecond, now: func() time.Time { return clock },
		logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	require.NoError(t, observeWaiting(tel.Meter, w, "tq"))

	start := time.Now()
	body := scrape(t, tel)
	require.Less(t, time.Since(start), 2*time.Second, "the listing is cut at its timeout")
	require.Contains(t, body, "toolround_other_test_total 1\n", "the rest of the scrape answers")
	require.NotContains(t, body, "toolround_approvals_waiting_rounds{")
	require.NotContains(t, body, "toolround_approval_oldest_wait_seconds{")

	body = scrape(t, tel)
	require.EqualValues(t, 1, lists.Load(), "a failure is not retried within 10 s")
	require.NotContains(t, body, "toolround_approvals_waiting_rounds{")

	clock = clock.Add(10 * time.Second)
	scrape(t, tel)
	require.EqualValues(t, 2, lists.Load())
	require.Equal(t, 1, strings.Count(logs.String(), "cannot list the waiting rounds"), "logged once:\n%s", logs.String())

	fail.Store(false)
	clock = clock.Add(10 * time.Second)
	body = scrape(t, tel)
	require.Contains(t, body, `toolround_approvals_waiting_rounds{task_queue="tq"} 1`+"\n")
	require.Contains(t, body, `toolround_approval_oldest_wait_seconds{task_queue="tq"} 3600`+"\n")
	require.Contains(t, logs.String(), "works again")

	// A failure after a success reports nothing either, not the last
	// values, and is logged again.
	fail.Store(true)
	clock = clock.Add(10 * time.Second)
	body = scrape(t, tel)
	require.NotContains(t, body, "toolround_approvals_waiting_rounds{")
	require.NotContains(t, body, "toolround_approval_oldest_wait_seconds{")
	require.Equal(t, 2, strings.Count(logs.String(), "cannot list the waiting rounds"), "once per failing stretch:\n%s", logs.String())
}

// TestWaitingQueryQuotesTheTaskQueue: the task queue is a string literal of
// the visibility query, its quotes doubled and backslashes escaped, so no
// name can end the literal early.
func TestWaitingQueryQuotesTheTaskQueue(t *testing.T) {
	require.Equal(t, "WorkflowType = 'ToolRound' AND ExecutionStatus = 'Running' AND ToolroundWaiting = true AND TaskQueue = 'toolround'",
		waitingQuery("toolround"))
	require.True(t, strings.HasSuffix(waitingQuery(`a' OR 'x'='x\`), ` AND TaskQueue = 'a'' OR ''x''=''x\\'`), waitingQuery(`a' OR 'x'='x\`))
}

// TestWaitingListingThatRecordsMetricsDoesNotStopTheScrape: the Temporal
// client records its own metrics into the same meter, and creates an
// instrument the first time a metric is used (a request's first failure,
// say). The metrics SDK holds its pipeline's lock while it runs the gauges'
// callback, and creating an instrument takes that lock: a listing run inside
// the callback that did so waited for itself, and every later scrape of the
// worker hung behind it. The listing runs apart from the callback, which
// waits at most the timeout.
func TestWaitingListingThatRecordsMetricsDoesNotStopTheScrape(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	var n, finished atomic.Int32
	w := &waitingApprovals{
		list: func(ctx context.Context) (waitingNow, error) {
			// What the client's metrics handler does on a first use.
			n.Add(1)
			c, err := tel.Meter.Int64Counter("temporal_first_use")
			if err != nil {
				return waitingNow{}, err
			}
			c.Add(ctx, 1)
			finished.Add(1)
			return waitingNow{Rounds: 2, Calls: 3}, nil
		},
		every: 10 * time.Second, timeout: 200 * time.Millisecond, now: time.Now,
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	require.NoError(t, observeWaiting(tel.Meter, w, "tq"))

	done := make(chan string, 1)
	go func() { done <- scrape(t, tel) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the scrape hangs: the listing waits for the lock its own callback holds")
	}
	// The first listing finishes once its scrape has let the lock go; a
	// busy machine may take a while. The next scrape then lists anew.
	require.Eventually(t, func() bool { return finished.Load() == 1 }, 5*time.Second, 5*time.Millisecond, "the first listing never finished")
	w.mu.Lock()
	w.at = time.Time{} // list again on the next scrape
	w.mu.Unlock()
	go func() { done <- scrape(t, tel) }()
	select {
	case body := <-done:
		require.Contains(t, body, "toolround_approvals_waiting_rounds{", "the next listing is reported")
		require.Contains(t, body, "temporal_first_use_total", "the listing's own metric was recorded")
		require.EqualValues(t, 2, n.Load())
	case <-time.After(5 * time.Second):
		t.Fatal("the second scrape hangs")
	}
}
