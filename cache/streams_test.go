package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/round"
)

var errSeenAll = errors.New("seen every event")

func events(session string, ids ...string) []round.Event {
	out := make([]round.Event, len(ids))
	for i, id := range ids {
		out[i] = round.Event{ID: id, Type: round.EventToolResult, SessionID: session, CallID: id, Time: time.Unix(int64(i), 0).UTC()}
	}
	return out
}

func ids(evs []round.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// TestWatchDropsRepeatedEvents: a retried activity publishes its events
// again; a reader sees each id once, in stream order, and skips entries it
// cannot decode.
func TestWatchDropsRepeatedEvents(t *testing.T) {
	c := open(t, cache.Options{})
	ctx := context.Background()
	session := unique(t)
	cleanup(t, c.Redis(), cache.EventsKey(session))

	require.NoError(t, c.Events().Publish(ctx, session, events(session, "a", "b")))
	require.NoError(t, c.Redis().XAdd(ctx, &redis.XAddArgs{Stream: cache.EventsKey(session), Values: []any{"id", "bad", "event", "{not json"}}).Err())
	require.NoError(t, c.Events().Publish(ctx, session, events(session, "b", "c")))
	n, err := c.Redis().XLen(ctx, cache.EventsKey(session)).Result()
	require.NoError(t, err)
	require.Equal(t, int64(5), n, "the stream keeps what was published")

	var got []round.Event
	err = c.Events().Watch(ctx, session, "0", func(e round.Event) error {
		got = append(got, e)
		if e.ID == "c" {
			return errSeenAll
		}
		return nil
	})
	require.ErrorIs(t, err, errSeenAll)
	require.Equal(t, []string{"a", "b", "c"}, ids(got))
	require.Equal(t, session, got[0].SessionID)
	require.Equal(t, round.EventToolResult, got[0].Type)
}

// TestWatchFollowsNewEvents reads from "$": only events published after the
// watch began, as they are published, until the context ends.
func TestWatchFollowsNewEvents(t *testing.T) {
	c := open(t, cache.Options{OpTimeout: 5 * time.Second})
	ctx := context.Background()
	session := unique(t)
	cleanup(t, c.Redis(), cache.EventsKey(session))
	require.NoError(t, c.Events().Publish(ctx, session, events(session, "old")))

	var mu sync.Mutex
	var got []round.Event
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return ids(got)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- c.Events().Watch(wctx, session, "$", func(e round.Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e)
			return nil
		})
	}()
	// The watch is reading once a probe published now reaches it.
	probes := 0
	require.Eventually(t, func() bool {
		probes++
		if c.Events().Publish(ctx, session, events(session, fmt.Sprintf("probe-%d", probes))) != nil {
			return false
		}
		return len(seen()) > 0
	}, 10*time.Second, 50*time.Millisecond)

	require.NoError(t, c.Events().Publish(ctx, session, events(session, "new-1", "new-2")))
	require.Eventually(t, func() bool { s := seen(); return len(s) > 0 && s[len(s)-1] == "new-2" }, 10*time.Second, 10*time.Millisecond)
	s := seen()
	require.NotContains(t, s, "old", `"$" starts after what is there`)
	require.Equal(t, []string{"new-1", "new-2"}, s[len(s)-2:])

	stop()
	select {
	case err := <-done:
		require.NoError(t, err, "an ended watch is not an error")
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
}

// TestPositionResumesAfterTheLastEventSeen: without after, watching from
// Position gives only what is published next; with after, what followed
// that event; an after the stream no longer holds starts at the end.
func TestPositionResumesAfterTheLastEventSeen(t *testing.T) {
	c := open(t, cache.Options{})
	ctx := context.Background()
	session := unique(t)
	cleanup(t, c.Redis(), cache.EventsKey(session))

	from, err := c.Events().Position(ctx, session, "", 100)
	require.NoError(t, err)
	require.Equal(t, "0", from, "an empty stream is read from its start")

	require.NoError(t, c.Events().Publish(ctx, session, events(session, "a", "b", "c")))
	watch := func(from, last string) []string {
		var got []round.Event
		err := c.Events().Watch(ctx, session, from, func(e round.Event) error {
			got = append(got, e)
			if e.ID == last {
				return errSeenAll
			}
			return nil
		})
		require.ErrorIs(t, err, errSeenAll)
		return ids(got)
	}
	afterA, err := c.Events().Position(ctx, session, "a", 100)
	require.NoError(t, err)
	require.Equal(t, []string{"b", "c"}, watch(afterA, "c"))

	end, err := c.Events().Position(ctx, session, "", 100)
	require.NoError(t, err)
	gone, err := c.Events().Position(ctx, session, "not-kept", 100)
	require.NoError(t, err)
	require.Equal(t, end, gone)
	require.NoError(t, c.Events().Publish(ctx, session, events(session, "d")))
	require.Equal(t, []string{"d"}, watch(end, "d"))
}

// TestCallFinishedIsPublishedOnce: the activity and pass 3 publish the same
// call_finished id (a retried activity or a re-run pass 3 too); the stream
// holds the first one only, beside the events of other types, which the
// stream keeps as published and readers deduplicate.
func TestCallFinishedIsPublishedOnce(t *testing.T) {
	c := open(t, cache.Options{})
	ctx := context.Background()
	session := unique(t)
	scope := round.Scope{SessionID: session, RunID: "r", Round: 1, WorkflowID: "toolround/" + session + "/r/1"}
	first := scope.CallFinished(time.Now().UTC(), "c1", "calculate", round.StatusOK, "42", time.Millisecond)
	again := scope.CallFinished(time.Now().UTC(), "c1", "calculate", round.StatusCancelled, "from pass 3", 0)
	other := scope.CallFinished(time.Now().UTC(), "c2", "calculate", round.StatusError, "bad", 0)
	cleanup(t, c.Redis(), cache.EventsKey(session), "toolround:{"+session+"}:event-published:"+first.ID, "toolround:{"+session+"}:event-published:"+other.ID)

	require.NoError(t, c.Events().Publish(ctx, session, []round.Event{first}))
	require.NoError(t, c.Events().Publish(ctx, session, []round.Event{again, other, again}))
	require.NoError(t, c.Events().Publish(ctx, session, events(session, "x", "x")))

	entries, err := c.Redis().XRange(ctx, cache.EventsKey(session), "-", "+").Result()
	require.NoError(t, err)
	var got []string
	for _, m := range entries {
		got = append(got, m.Values["id"].(string))
	}
	require.Equal(t, []string{first.ID, other.ID, "x", "x"}, got)
	require.Contains(t, entries[0].Values["event"], `"status":"ok"`, "the first publication stays")
	require.Contains(t, entries[0].Values["event"], `"duration_ms":1`)
}
