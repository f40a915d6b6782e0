package cache_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// TestOldKeyNamesAreReadDuringAnUpgradeV1: what a worker of the release
// before hash tags wrote under the old names (one node) is read by this
// one while both run: a secret and its operation record, the session
// history, a call_finished already published and its stream, a history
// append already made.
func TestOldKeyNamesAreReadDuringAnUpgradeV1(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	ctx := context.Background()
	session := unique(t)
	old := func(key string) string {
		o, ok := cache.LegacyKey(key)
		require.True(t, ok, key)
		return o
	}
	store := c.SessionData()

	// A secret stored by an old worker, and the record of the operation.
	require.NoError(t, rdb.HSet(ctx, old(secrets.Key(session)), "token", "sealed-old").Err())
	require.NoError(t, rdb.HSet(ctx, old(secrets.OpsKey(session)), "op-1", "done:1").Err())
	cleanup(t, rdb, old(secrets.Key(session)), old(secrets.OpsKey(session)), secrets.Key(session), secrets.OpsKey(session))
	v, ok, err := store.HGet(ctx, secrets.Key(session), "token")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "sealed-old", v)
	names, err := store.HKeys(ctx, secrets.Key(session))
	require.NoError(t, err)
	require.Equal(t, []string{"token"}, names)
	applied, err := store.SettleOp(ctx, secrets.OpsKey(session), "op-1", 1, time.Hour)
	require.NoError(t, err)
	require.True(t, applied, "the old record says the write took effect")
	fenced, err := store.HSetOp(ctx, secrets.Key(session), "token", "again", secrets.OpsKey(session), "op-1", 1, time.Hour)
	require.NoError(t, err)
	require.False(t, fenced)
	v, _, _ = store.HGet(ctx, secrets.Key(session), "token")
	require.Equal(t, "sealed-old", v, "an operation the old worker did is not done again")
	// A lost attempt settled now is fenced under both names, so a worker of
	// either release refuses it.
	applied, err = store.SettleOp(ctx, secrets.OpsKey(session), "op-2", 1, time.Hour)
	require.NoError(t, err)
	require.False(t, applied)
	for _, k := range []string{secrets.OpsKey(session), old(secrets.OpsKey(session))} {
		st, err := rdb.HGet(ctx, k, "op-2").Result()
		require.NoError(t, err)
		require.Equal(t, "fence:2", st, k)
	}

	// History: the old list's records come first, then the new ones.
	rec := func(text string) tools.HistoryRecord {
		return tools.HistoryRecord{RunID: "r", Role: "tool", Content: text, Time: time.Now().UTC()}
	}
	b, _ := json.Marshal(rec("before the upgrade"))
	require.NoError(t, rdb.RPush(ctx, old(tools.HistoryKey(session)), string(b)).Err())
	cleanup(t, rdb, old(tools.HistoryKey(session)), tools.HistoryKey(session))
	require.NoError(t, c.History().Append(ctx, session, []tools.HistoryRecord{rec("after the upgrade")}))
	l, err := store.List(ctx, tools.HistoryKey(session), 0)
	require.NoError(t, err)
	require.Len(t, l, 2)
	require.Contains(t, l[0], "before the upgrade")
	require.Contains(t, l[1], "after the upgrade")
	l, err = store.List(ctx, tools.HistoryKey(session), 1)
	require.NoError(t, err)
	require.Len(t, l, 1)
	require.Contains(t, l[0], "after the upgrade")

	// A call_finished an old worker published (old marker, old stream) is
	// not published again, and a watcher sees it.
	scope := round.Scope{SessionID: session, RunID: "r", Round: 1, WorkflowID: "toolround/" + session + "/r/1"}
	done := scope.CallFinished(time.Now().UTC(), "c1", "calculate", round.StatusOK, "42", time.Millisecond)
	eb, _ := json.Marshal(done)
	oldMarker := "toolround:event-published:" + session + ":" + done.ID
	require.NoError(t, rdb.Set(ctx, oldMarker, "1", time.Hour).Err())
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: old(cache.EventsKey(session)), Values: []any{"id", done.ID, "event", string(eb)}}).Err())
	cleanup(t, rdb, oldMarker, old(cache.EventsKey(session)), cache.EventsKey(session), "toolround:{"+session+"}:event-published:"+done.ID)
	require.NoError(t, c.Events().Publish(ctx, session, []round.Event{done}))
	n, err := rdb.XLen(ctx, cache.EventsKey(session)).Result()
	require.NoError(t, err)
	require.Zero(t, n, "published once, by the old worker")
	require.NoError(t, c.Events().Publish(ctx, session, events(session, "new")))

	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var seen []string
	err = c.Events().Watch(wctx, session, "0", func(ev round.Event) error {
		seen = append(seen, ev.ID)
		if len(seen) == 2 {
			cancel()
		}
		return nil
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{done.ID, "new"}, seen, "a watcher reads both streams")
}
