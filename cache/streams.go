package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// EventsKey is the stream of a session's events.
func EventsKey(sessionID string) string { return SessionKey(sessionID, "events") }

// Stream and list bounds.
const (
	maxStreamLen  = 10000
	maxHistoryLen = 5000
	// BlobTTL outlives the dev server's default retention (1 day) and a
	// typical namespace retention, so a finished round's result still resolves.
	BlobTTL = 8 * 24 * time.Hour
)

// Events publishes and reads session event streams.
type Events struct{ c *Client }

// Events returns the event streams over this connection.
func (c *Client) Events() *Events { return &Events{c: c} }

// Publish appends events to the session's stream. Readers drop an event
// id they saw (Watch), so most events may be published again by a retried
// activity; a call_finished event, which the ExecuteTool activity and pass
// 3 may both publish with different previews, is appended once per id, the
// first one (U7).
func (e *Events) Publish(ctx context.Context, sessionID string, events []round.Event) error {
	if e.c.cooling() {
		return errCooldown
	}
	ctx, cancel := e.c.op(ctx)
	defer cancel()
	pipe := e.c.rdb.Pipeline()
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("cache: encode event %s: %w", ev.ID, err)
		}
		if ev.Type == round.EventCallFinished {
			keys := e.c.withLegacy(EventsKey(sessionID), eventPublishedKey(sessionID, ev.ID))
			// Eval, not Run: a NOSCRIPT reply would fail the whole pipeline.
			addOnce.Eval(ctx, pipe, keys, int(eventPublishedTTL/time.Second), maxStreamLen, ev.ID, string(b))
			continue
		}
		pipe.XAdd(ctx, &redis.XAddArgs{
			Stream: EventsKey(sessionID), MaxLen: maxStreamLen, Approx: true,
			Values: []any{"id", ev.ID, "event", string(b)},
		})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		e.c.skip("events publish", err)
		return fmt.Errorf("cache: publish events of %s: %w", sessionID, err)
	}
	return nil
}

// eventPublishedTTL is how long a publish-once event id is remembered: far
// longer than a round takes from a call's end to its pass 3.
const eventPublishedTTL = 24 * time.Hour

func eventPublishedKey(sessionID, id string) string {
	return SessionKey(sessionID, "event-published") + ":" + id
}

// withLegacy is the keys of a publish-once script: the list or stream,
// its marker, and the marker under its old name when it may exist (V1).
func (c *Client) withLegacy(key, marker string) []string {
	keys := []string{key, marker}
	if readsLegacy(c.rdb) {
		if old, ok := LegacyKey(marker); ok {
			keys = append(keys, old)
		}
	}
	return keys
}

// addOnce appends the event ARGV[4] with id ARGV[3] to the stream KEYS[1]
// (trimmed to about ARGV[2] entries) unless KEYS[2], or KEYS[3] (the
// marker under its old name) when given, says it was appended already; it
// sets KEYS[2] for ARGV[1] seconds. One script, so a crash never leaves one
// without the other.
var addOnce = redis.NewScript(`
if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', tonumber(ARGV[1])) then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'event', ARGV[4])
  return 1
end
return 0
`)

// Position is the stream position to Watch from so that no event published
// from now on is missed: the newest entry's ("0" when the stream is empty),
// or, with after, the entry of the event with that id when it is among the
// back newest (a client resuming after the last event it saw).
func (e *Events) Position(ctx context.Context, sessionID, after string, back int64) (string, error) {
	n := int64(1)
	if after != "" {
		n = back
	}
	from := "0"
	for _, key := range e.streams(sessionID) {
		entries, err := e.c.rdb.XRevRangeN(ctx, key, "+", "-", n).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", err
		}
		if len(entries) > 0 && laterID(entries[0].ID, from) {
			from = entries[0].ID
		}
		if after != "" {
			for _, m := range entries {
				if id, _ := m.Values["id"].(string); id == after {
					return m.ID, nil
				}
			}
		}
	}
	return from, nil
}

// streams are the keys of a session's events: its stream and, where it
// may exist, the stream under its old name, where workers of the previous
// release publish during an upgrade (V1).
func (e *Events) streams(sessionID string) []string {
	keys := []string{EventsKey(sessionID)}
	if readsLegacy(e.c.rdb) {
		if old, ok := LegacyKey(keys[0]); ok {
			keys = append(keys, old)
		}
	}
	return keys
}

// laterID reports whether stream entry id a comes after b ("ms-seq").
func laterID(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	if len(am) != len(bm) {
		return len(am) > len(bm)
	}
	if am != bm {
		return am > bm
	}
	if len(as) != len(bs) {
		return len(as) > len(bs)
	}
	return as > bs
}

// Watch calls fn for every event of the session from the stream position
// from ("$" for new events only, "0" for all kept events) until ctx ends.
// Events seen before (same id, from retried activities) are dropped.
func (e *Events) Watch(ctx context.Context, sessionID, from string, fn func(round.Event) error) error {
	seen := newRecent(watchMemory)
	if from == "" {
		from = "$"
	}
	keys := e.streams(sessionID)
	last := make([]string, len(keys))
	for i := range last {
		last[i] = from
	}
	for ctx.Err() == nil {
		res, err := e.c.rdb.XRead(ctx, &redis.XReadArgs{Streams: append(append([]string(nil), keys...), last...), Block: 2 * time.Second, Count: 100}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if strings.Contains(err.Error(), "timeout") {
				continue
			}
			return fmt.Errorf("cache: watch %s: %w", sessionID, err)
		}
		for _, s := range res {
			for _, m := range s.Messages {
				for i, k := range keys {
					if k == s.Stream {
						last[i] = m.ID
					}
				}
				raw, _ := m.Values["event"].(string)
				var ev round.Event
				if err := json.Unmarshal([]byte(raw), &ev); err != nil {
					continue
				}
				if !seen.add(ev.ID) {
					continue
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// History appends to session histories.
type History struct{ c *Client }

// History returns the session histories over this connection.
func (c *Client) History() *History { return &History{c: c} }

// Append adds records to the session's history list, keeping the newest.
// The same records (equal but for their time) are appended once: pass 3
// publishes them from a local activity, which runs again when a worker dies
// after its writes and before its result is recorded.
func (h *History) Append(ctx context.Context, sessionID string, records []tools.HistoryRecord) error {
	if len(records) == 0 {
		return nil
	}
	if h.c.cooling() {
		return errCooldown
	}
	vals := make([]any, 0, len(records)+2)
	vals = append(vals, int(historyAppendedTTL/time.Second), maxHistoryLen)
	id := sha256.New()
	for _, r := range records {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("cache: encode history record: %w", err)
		}
		vals = append(vals, string(b))
		r.Time = time.Time{}
		b, _ = json.Marshal(r)
		id.Write(b)
	}
	ctx, cancel := h.c.op(ctx)
	defer cancel()
	keys := h.c.withLegacy(tools.HistoryKey(sessionID), historyAppendedKey(sessionID, hex.EncodeToString(id.Sum(nil))))
	if err := appendOnce.Run(ctx, h.c.rdb, keys, vals...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		h.c.skip("history append", err)
		return fmt.Errorf("cache: append history of %s: %w", sessionID, err)
	}
	return nil
}

// historyAppendedTTL is how long an append is remembered: far longer than
// a crashed worker's task takes to run again elsewhere.
const historyAppendedTTL = 24 * time.Hour

func historyAppendedKey(sessionID, id string) string {
	return SessionKey(sessionID, "history-appended") + ":" + id
}

// appendOnce pushes ARGV[3:] onto KEYS[1] and trims it to ARGV[2] entries
// unless KEYS[2], or KEYS[3] (the marker under its old name) when given,
// says these records were pushed already; it sets KEYS[2] for ARGV[1]
// seconds. One script, so a crash never leaves one without the other.
var appendOnce = redis.NewScript(`
if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', tonumber(ARGV[1])) then
  redis.call('RPUSH', KEYS[1], unpack(ARGV, 3))
  redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
  return 1
end
return 0
`)

// Blobs keeps large results; refs are content hashes, so storing the same
// result twice (a retried activity) is one blob.
type Blobs struct{ c *Client }

// Blobs returns the blob store over this connection.
func (c *Client) Blobs() *Blobs { return &Blobs{c: c} }

// BlobPrefix starts every blob reference.
const BlobPrefix = "toolround:blob:"

const (
	// blobTimeout bounds one blob operation.
	blobTimeout = 10 * time.Second
	// blobRate is the slowest transfer a blob Put waits for: it gets
	// OpTimeout plus its size at this rate (at most blobTimeout), so a large
	// result has time to move while a Redis that hangs costs a round little.
	blobRate = 4 << 20 // bytes per second
)

// Put stores content and returns its reference. A write that no replica
// confirmed is still a stored blob here (see PutConfirmed).
func (b *Blobs) Put(ctx context.Context, content string) (string, error) {
	ref, _, err := b.PutConfirmed(ctx, content)
	return ref, err
}

// PutConfirmed stores content and returns its reference and whether the
// write is safe from a failover: where the master has replicas, WAIT 1
// must see one of them acknowledge it within BlobWaitTimeout; a master
// without replicas confirms what it stored (O1).
func (b *Blobs) PutConfirmed(ctx context.Context, content string) (string, bool, error) {
	if b.c.cooling() {
		return "", false, errCooldown
	}
	sum := sha256.Sum256([]byte(content))
	ref := BlobPrefix + hex.EncodeToString(sum[:])
	wait := min(blobTimeout, b.c.opts.OpTimeout+time.Duration(len(content))*time.Second/blobRate)
	ctx, cancel := context.WithTimeout(ctx, wait+BlobWaitTimeout)
	defer cancel()
	confirmed, err := b.c.writeConfirmed(ctx, ref, func(ctx context.Context, p redis.Pipeliner) {
		p.Set(ctx, ref, content, BlobTTL)
	})
	if err != nil {
		b.c.skip("blob put", err)
		return "", false, fmt.Errorf("cache: store blob: %w", err)
	}
	return ref, confirmed, nil
}

// Get returns a stored blob.
func (b *Blobs) Get(ctx context.Context, ref string) (string, error) {
	if !strings.HasPrefix(ref, BlobPrefix) {
		return "", fmt.Errorf("cache: %q is not a blob reference", ref)
	}
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	v, err := b.c.blob.Get(ctx, ref).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("cache: blob %s has expired or never existed", ref)
	}
	if err != nil {
		return "", fmt.Errorf("cache: get blob %s: %w", ref, err)
	}
	return v, nil
}

// Refresh gives every blob of refs the whole BlobTTL again, as if it had
// just been stored, and returns those that are gone (expired, never
// stored, or no blob reference).
func (b *Blobs) Refresh(ctx context.Context, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	pipe := b.c.blob.Pipeline()
	var missing []string
	var asked []string
	var cmds []*redis.BoolCmd
	for _, ref := range refs {
		if !strings.HasPrefix(ref, BlobPrefix) {
			missing = append(missing, ref)
			continue
		}
		asked = append(asked, ref)
		cmds = append(cmds, pipe.Expire(ctx, ref, BlobTTL))
	}
	if len(cmds) == 0 {
		return missing, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("cache: refresh blobs: %w", err)
	}
	for i, c := range cmds {
		if !c.Val() {
			missing = append(missing, asked[i])
		}
	}
	return missing, nil
}

// watchMemory is how many event ids a watcher remembers to drop duplicates:
// duplicates come from retries of the same round, close together.
const watchMemory = 10000

// recent is a set of the last n strings added.
type recent struct {
	ids  map[string]bool
	ring []string
	next int
}

func newRecent(n int) *recent { return &recent{ids: make(map[string]bool, n), ring: make([]string, n)} }

// add reports whether id is new, and remembers it.
func (r *recent) add(id string) bool {
	if r.ids[id] {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.ids, old)
	}
	r.ring[r.next] = id
	r.ids[id] = true
	r.next = (r.next + 1) % len(r.ring)
	return true
}

// BlobGrants records which sessions' results named which blobs, so that a
// reader that may see a session reads only that session's blobs (the MCP
// gateway's resources/read, Z4).
type BlobGrants struct{ c *Client }

// BlobGrants returns the grants over this connection.
func (c *Client) BlobGrants() *BlobGrants { return &BlobGrants{c: c} }

func grantKey(session, ref string) string {
	return SessionKey(session, "blob-grant:"+strings.TrimPrefix(ref, BlobPrefix))
}

// Grant records that a result of session named ref, for as long as a blob
// lives.
func (g *BlobGrants) Grant(ctx context.Context, session, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	return g.c.rdb.Set(ctx, grantKey(session, ref), "1", BlobTTL).Err()
}

// Granted reports whether a result of session named ref.
func (g *BlobGrants) Granted(ctx context.Context, session, ref string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	n, err := g.c.rdb.Exists(ctx, grantKey(session, ref)).Result()
	return n == 1, err
}
