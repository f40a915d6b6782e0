package cache

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// BlobWaitTimeout is how long a blob write waits for a replica to
// acknowledge it (WAIT 1 <timeout>) where the master has replicas (O1).
const BlobWaitTimeout = time.Second

// replicasTTL is how long a master's number of replicas is remembered.
const replicasTTL = 10 * time.Second

// replicaCache remembers how many replicas each master had.
type replicaCache struct {
	mu sync.Mutex
	m  map[string]replicaCount
}

type replicaCount struct {
	n  int
	at time.Time
}

// writeConfirmed runs write on the master that holds key, on one
// connection, and then, when that master has replicas, WAIT 1 on the same
// connection: confirmed is whether a replica acknowledged the write (a
// master without replicas confirms its own). WAIT counts the writes of its
// own connection only, hence the one connection.
func (c *Client) writeConfirmed(ctx context.Context, key string, write func(context.Context, redis.Pipeliner)) (bool, error) {
	node, err := c.blobMaster(ctx, key)
	if err != nil {
		return false, err
	}
	conn := node.Conn()
	defer func() { _ = conn.Close() }()
	replicas, err := c.replicas.count(ctx, node.Options().Addr, conn)
	if err != nil {
		return false, err
	}
	var wait *redis.Cmd
	_, err = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		write(ctx, p)
		if replicas > 0 {
			wait = p.Do(ctx, "wait", 1, BlobWaitTimeout.Milliseconds())
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if wait == nil {
		return true, nil
	}
	n, err := wait.Int64()
	return n >= 1, err
}

// blobMaster is the client of the master that holds key: the cluster's
// node of key's slot, else the one client (of Sentinel's current master,
// or the one node).
func (c *Client) blobMaster(ctx context.Context, key string) (*redis.Client, error) {
	switch rdb := c.blob.(type) {
	case *redis.ClusterClient:
		return rdb.MasterForKey(ctx, key)
	case *redis.Client:
		return rdb, nil
	}
	panic("cache: a Redis client of no known kind")
}

// count is the number of replicas connected to the master at addr, asked
// on conn at most every replicasTTL.
func (r *replicaCache) count(ctx context.Context, addr string, conn *redis.Conn) (int, error) {
	r.mu.Lock()
	rc, ok := r.m[addr]
	r.mu.Unlock()
	if ok && time.Since(rc.at) < replicasTTL {
		return rc.n, nil
	}
	info, err := conn.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]replicaCount{}
	}
	r.m[addr] = replicaCount{n: n, at: time.Now()}
	r.mu.Unlock()
	return n, nil
}
