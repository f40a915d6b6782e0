package console

import (
	"context"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolround/toolround/internal/usertools"
)

// ToolQueueReader is a Backend that reads, at display time, whether tool
// workers poll a user tool's task queue (Y2), for the cards of its waiting
// calls. A Backend without it shows the queue alone.
type ToolQueueReader interface {
	ToolQueue(ctx context.Context, queue string) (ToolQueueState, error)
}

// ToolQueueState is what a card shows of a user tool's queue.
type ToolQueueState struct {
	// Pollers are the tool workers that polled the queue within
	// TOOL_WORKER_TTL.
	Pollers int
	// LastPoll is the newest poll the server remembers; zero: none.
	LastPoll time.Time
}

// ToolQueue reads the queue's activity pollers from the server, as the
// worker reads a queue's liveness (usertools.Sync).
func (b *TemporalBackend) ToolQueue(ctx context.Context, queue string) (ToolQueueState, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	resp, err := b.tc.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return ToolQueueState{}, err
	}
	ttl := b.opts.ToolWorkerTTL
	if ttl <= 0 {
		ttl = usertools.DefaultTTL
	}
	var st ToolQueueState
	for _, p := range resp.GetPollers() {
		t := p.GetLastAccessTime().AsTime()
		if p.GetLastAccessTime() == nil {
			continue
		}
		if t.After(st.LastPoll) {
			st.LastPoll = t
		}
		if time.Since(t) <= ttl {
			st.Pollers++
		}
	}
	return st, nil
}

// queueView is the line a card of a user tool's call shows of its queue.
type queueView struct {
	Pollers int
	// Since is when a tool worker last polled, with how long ago, when
	// none does now; empty when the server remembers none.
	Since string
	// Unavailable says why the queue's state could not be read.
	Unavailable string
}

// withQueues reads the state of the queues of the user tools' cards, each
// queue once and all at once.
func (s *Server) withQueues(ctx context.Context, cards []card) {
	qr, ok := s.b.(ToolQueueReader)
	if !ok {
		return
	}
	views := map[string]*queueView{}
	for _, c := range cards {
		if c.P.Queue != "" {
			views[c.P.Queue] = nil
		}
	}
	if len(views) == 0 {
		return
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	now := s.opts.Now()
	queues := make([]string, 0, len(views))
	for q := range views {
		queues = append(queues, q)
	}
	// The goroutines write views while this loop would still read it: it
	// ranges over the names taken before.
	for _, q := range queues {
		wg.Add(1)
		go func(q string) {
			defer wg.Done()
			v := &queueView{}
			st, err := qr.ToolQueue(ctx, q)
			switch {
			case err != nil:
				s.log.Warn("tool queue state unavailable", "queue", q, "err", err)
				v.Unavailable = err.Error()
			case st.Pollers > 0:
				v.Pollers = st.Pollers
			case !st.LastPoll.IsZero():
				v.Since = fmt.Sprintf("%s (%s ago)", st.LastPoll.UTC().Format("2006-01-02 15:04:05 UTC"), human(now.Sub(st.LastPoll)))
			}
			mu.Lock()
			views[q] = v
			mu.Unlock()
		}(q)
	}
	wg.Wait()
	for i := range cards {
		if q := cards[i].P.Queue; q != "" {
			cards[i].Queue = views[q]
		}
	}
}
