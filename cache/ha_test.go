package cache_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/secrets"
)

// TestClusterAndSentinelO1: against a real Redis Cluster (three masters,
// three replicas) and a real Sentinel set (a master, its replica, three
// sentinels), both started by scripts/redis-ha.sh, every use of Redis
// works: the result cache, events published once and watched, the session
// history appended once, blobs (confirmed by a replica), sealed secrets
// with their operation records (one script over two keys: one slot), and
// MCP grants.
func TestClusterAndSentinelO1(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cluster bool
		mode    cache.Mode
	}{{"cluster", true, cache.Cluster}, {"sentinel", false, cache.Sentinel}} {
		t.Run(tt.name, func(t *testing.T) {
			u := testenv.RedisHA(t, tt.cluster)
			c, err := cache.Open(context.Background(), cache.Options{URL: u, OpTimeout: time.Second})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			require.Equal(t, tt.mode, c.Mode())
			ctx := context.Background()
			session := unique(t)
			rdb := c.Redis()

			// The result cache.
			key := tools.SearchWebCacheKey(session, "q")
			cleanup(t, rdb, key)
			c.ResultCache().Set(ctx, key, "hit", time.Minute)
			v, ok := c.ResultCache().Get(ctx, key)
			require.True(t, ok)
			require.Equal(t, "hit", v)

			// Events: call_finished once (a script over the stream and its
			// marker), others as published; a watcher sees them.
			scope := round.Scope{SessionID: session, RunID: "r", Round: 1, WorkflowID: "toolround/" + session + "/r/1"}
			done := scope.CallFinished(time.Now().UTC(), "c1", "calculate", round.StatusOK, "42", time.Millisecond)
			cleanup(t, rdb, cache.EventsKey(session), "toolround:{"+session+"}:event-published:"+done.ID)
			require.NoError(t, c.Events().Publish(ctx, session, []round.Event{done, done}))
			require.NoError(t, c.Events().Publish(ctx, session, append(events(session, "e1"), done)))
			n, err := rdb.XLen(ctx, cache.EventsKey(session)).Result()
			require.NoError(t, err)
			require.EqualValues(t, 2, n)
			from, err := c.Events().Position(ctx, session, "", 0)
			require.NoError(t, err)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var seen []string
			go func() { _ = c.Events().Publish(ctx, session, events(session, "e2")) }()
			require.NoError(t, c.Events().Watch(wctx, session, from, func(ev round.Event) error {
				seen = append(seen, ev.ID)
				cancel()
				return nil
			}))
			require.Equal(t, []string{"e2"}, seen)

			// The session history, appended once.
			cleanup(t, rdb, tools.HistoryKey(session))
			recs := []tools.HistoryRecord{{RunID: "r", Role: "tool", Content: "r1", Time: time.Now().UTC()}}
			require.NoError(t, c.History().Append(ctx, session, recs))
			require.NoError(t, c.History().Append(ctx, session, recs))
			l, err := c.SessionData().List(ctx, tools.HistoryKey(session), 0)
			require.NoError(t, err)
			require.Len(t, l, 1)
			t.Cleanup(func() {
				keys, _ := rdb.Keys(context.Background(), "toolround:{"+session+"}:history-appended:*").Result()
				for _, k := range keys {
					rdb.Del(context.Background(), k)
				}
			})

			// Blobs: a replica confirms the write.
			big := strings.Repeat("blob "+session, 2000)
			ref, confirmed, err := c.Blobs().PutConfirmed(ctx, big)
			require.NoError(t, err)
			cleanup(t, rdb, ref)
			require.True(t, confirmed, "WAIT 1: a replica has it")
			got, err := c.Blobs().Get(ctx, ref)
			require.NoError(t, err)
			require.Equal(t, big, got)
			missing, err := c.Blobs().Refresh(ctx, []string{ref, cache.BlobPrefix + "00"})
			require.NoError(t, err)
			require.Equal(t, []string{cache.BlobPrefix + "00"}, missing)

			// Sealed secrets and their operation records.
			key32 := bytes.Repeat([]byte{7}, secrets.KeySize)
			st, err := secrets.NewStore(key32, secrets.StoreOptions{Hashes: c.SessionData(), TTL: time.Hour})
			require.NoError(t, err)
			cleanup(t, rdb, secrets.Key(session), secrets.OpsKey(session))
			require.NoError(t, st.PutOp(ctx, session, "token", "s3cret-token-value-123", "op-1", 1))
			applied, err := st.SettleOp(ctx, session, "op-1", 1)
			require.NoError(t, err)
			require.True(t, applied)
			applied, err = st.SettleOp(ctx, session, "op-2", 1)
			require.NoError(t, err)
			require.False(t, applied)
			require.ErrorIs(t, st.PutOp(ctx, session, "token", "late-token-value-456", "op-2", 1), secrets.ErrFenced, "a fenced attempt writes nothing")
			sv, err := st.Get(ctx, session, "token")
			require.NoError(t, err)
			require.Equal(t, "s3cret-token-value-123", sv)
			raw, err := rdb.HGet(ctx, secrets.Key(session), "token").Result()
			require.NoError(t, err)
			require.NotContains(t, raw, "s3cret", "sealed")

			// MCP grants.
			g, err := mcp.NewGrants(c.SessionData(), key32)
			require.NoError(t, err)
			server := "srv-" + session
			t.Cleanup(func() {
				rdb.HDel(context.Background(), "toolround:mcp:grants", server)
				rdb.HDel(context.Background(), "toolround:mcp:signins", server)
			})
			require.NoError(t, g.NeedSignIn(ctx, mcp.SignInNeed{Server: server, URL: "https://mcp.example/", Since: time.Now()}))
			_, ok, err = g.Need(ctx, server)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, g.PutGrant(ctx, &mcp.Grant{Server: server, URL: "https://mcp.example/", Token: &oauth2.Token{AccessToken: "at-" + session}}))
			gr, err := g.Grant(ctx, server, "https://mcp.example/")
			require.NoError(t, err)
			require.NotNil(t, gr)
			require.Equal(t, "at-"+session, gr.Token.AccessToken)
		})
	}
}
