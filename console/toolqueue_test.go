package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queueFake is the fake backend with a ToolQueueReader that answers from a
// table of queues, and counts what it was asked.
type queueFake struct {
	*fakeBackend
	mu     sync.Mutex
	asked  map[string]int
	queues map[string]ToolQueueState
	failed error
}

func (q *queueFake) ToolQueue(_ context.Context, queue string) (ToolQueueState, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked[queue]++
	if q.failed != nil {
		return ToolQueueState{}, q.failed
	}
	return q.queues[queue], nil
}

// TestCardShowsAUserToolsQueueAndWorkersY2: a waiting call of a user tool
// shows, on the inbox, the session page and the call page, its tool's
// queue and whether tool workers poll it, read when the page is shown,
// each queue once per page: how many poll it, or that none does and since
// when, or why that could not be read. A built-in's card shows none.
func TestCardShowsAUserToolsQueueAndWorkersY2(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := &queueFake{fakeBackend: newFake(), asked: map[string]int{}, queues: map[string]ToolQueueState{
		"orders":  {Pollers: 2, LastPoll: now.Add(-time.Second)},
		"billing": {LastPoll: now.Add(-5 * time.Minute)},
	}}
	base := f.inbox[0].Pending[0]
	for _, pc := range []PendingCall{
		{CallID: "u1", Tool: "refund_order", Queue: "orders"},
		{CallID: "u2", Tool: "lookup_order", Queue: "orders"},
		{CallID: "u3", Tool: "charge", Queue: "billing"},
		{CallID: "u4", Tool: "ship", Queue: "shipping"},
	} {
		pc.Kind, pc.ApprovalID, pc.Arguments, pc.Since, pc.Deadline = KindConfirm, "id-"+pc.CallID, `{"id":"A-1"}`, base.Since, base.Deadline
		f.inbox[0].Pending = append(f.inbox[0].Pending, pc)
	}
	s, err := New(Options{Backend: f, LinkKey: make([]byte, 32), Now: func() time.Time { return now },
		Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c := browser(t)
	signIn(t, ts, c, approverToken)
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(ts.URL + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		return string(b)
	}

	live := `served by the tool workers of queue <code>orders</code>: 2 tool workers poll it.`
	idle := `served by the tool workers of queue <code>billing</code>: no tool worker polls it since 2026-12-05 11:55:00 UTC (5m 0s ago); approved, the call waits for one up to the tool's schedule-to-start timeout, then ends <code>tool_unavailable</code>.`
	never := `served by the tool workers of queue <code>shipping</code>: no tool worker polls it; approved`
	for _, page := range []string{"/", "/sessions/s1"} {
		f.asked = map[string]int{}
		body := get(page)
		require.Contains(t, body, live, page)
		require.Contains(t, body, idle, page)
		require.Contains(t, body, never, page)
		require.Contains(t, body, `<p class="queue idle">`, page)
		require.Equal(t, map[string]int{"orders": 1, "billing": 1, "shipping": 1}, f.asked, "%s: each queue is read once", page)
	}
	body := get("/calls/toolround/s1/r1/1?call=u3")
	require.Contains(t, body, idle)
	require.NotContains(t, body, "queue <code>orders</code>")
	body = get("/calls/toolround/s1/r1/1?call=call_1")
	require.NotContains(t, body, `class="queue`, "a built-in's card names no queue")

	f.failed = errors.New("the server is unreachable")
	body = get("/calls/toolround/s1/r1/1?call=u1")
	require.Contains(t, body, `served by the tool workers of queue <code>orders</code>: whether one polls it could not be read (the server is unreachable).`)
}
