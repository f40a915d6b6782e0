package cache

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SessionKey is the key of a session's kind of data that a script or a
// transaction touches together with other keys of that session: the
// session id is its hash tag, so in a Redis Cluster all of them are in one
// slot (O1): toolround:{<session>}:<kind>.
func SessionKey(sessionID, kind string) string {
	return "toolround:{" + sessionID + "}:" + kind
}

// legacyKinds are the kinds SessionKey names that had other names before
// hash tags (toolround:<kind>:<session>[:<id>]). They are read under both
// names where the old ones can exist: a deployment that is no cluster,
// since the releases that wrote them spoke to one node only (V1: workers of
// both releases run at once during an upgrade). Every old name expires
// within its TTL or is capped, so after one TTL nothing is left to read.
var legacyKinds = map[string]bool{
	"events": true, "event-published": true,
	"history": true, "history-appended": true,
	"secret": true, "secretops": true,
}

// LegacyKey is the name key had before hash tags, when it had one:
// toolround:{s}:secret is toolround:secret:s, toolround:{s}:event-published:id
// is toolround:event-published:s:id.
func LegacyKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "toolround:{")
	if !ok {
		return "", false
	}
	session, rest, ok := strings.Cut(rest, "}:")
	if !ok || session == "" {
		return "", false
	}
	kind, id, hasID := strings.Cut(rest, ":")
	if !legacyKinds[kind] {
		return "", false
	}
	old := "toolround:" + kind + ":" + session
	if hasID {
		old += ":" + id
	}
	return old, true
}

// readsLegacy reports whether rdb may hold keys under their old names: any
// deployment but a cluster.
func readsLegacy(rdb redis.UniversalClient) bool {
	_, cluster := rdb.(*redis.ClusterClient)
	return !cluster
}

// reloadOnNetError makes a cluster client ask the cluster for its slots
// again after a command fails on the network: a master that died leaves
// the client's slot map naming it, and go-redis reloads the map only on a
// MOVED reply, which a client that keeps dialling the dead master never
// gets. After a failover the next command finds the promoted replica.
type reloadOnNetError struct{ cc *redis.ClusterClient }

func (h reloadOnNetError) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnNetError) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(err)
		return err
	}
}

func (h reloadOnNetError) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after(err)
		return err
	}
}

func (h reloadOnNetError) after(err error) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return
	}
	h.cc.ReloadState(context.Background())
}

// newClusterClient is a cluster client that finds a failover's new master
// (reloadOnNetError).
func newClusterClient(o *redis.ClusterOptions) *redis.ClusterClient {
	cc := redis.NewClusterClient(o)
	cc.AddHook(reloadOnNetError{cc: cc})
	return cc
}
