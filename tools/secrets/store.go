package secrets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolround/toolround/tools"
)

var _ tools.Secrets = (*Store)(nil)

// ErrNotFound is wrapped by Get when the session has no secret of that name.
var ErrNotFound = errors.New("secret not found")

// ErrTooShort is wrapped by Put for a value of fewer than MinValueChars
// characters.
var ErrTooShort = fmt.Errorf("the value is shorter than %d characters; a value that short would be found, and redacted, all over ordinary results, so it is not kept", MinValueChars)

// DefaultTTL is how long a session's secrets live after the last store_secret.
const DefaultTTL = 30 * 24 * time.Hour

// StoreOptions configures a Store.
type StoreOptions struct {
	// Hashes keeps the sealed values, one hash per session under
	// Key(sessionID); the worker passes cache.SessionData, over Redis. Nil:
	// an in-process map, which is not shared between workers and is lost
	// when the process ends.
	Hashes Hashes
	// TTL is how long a session's secrets live after the last Put.
	// Zero: DefaultTTL. Negative: they never expire.
	TTL time.Duration
}

// Hashes is the shared storage a Store keeps sealed values in: Redis hashes
// whose whole key expires ttl after its last write (never when ttl <= 0).
// cache.SessionData implements it.
type Hashes interface {
	HSet(ctx context.Context, key, field, value string, ttl time.Duration) error
	// HGet reports a missing field with ok false and no error.
	HGet(ctx context.Context, key, field string) (value string, ok bool, err error)
	HKeys(ctx context.Context, key string) ([]string, error)
	// HDel removes field; a missing one is not an error.
	HDel(ctx context.Context, key, field string) error
}

// OpHashes is Hashes that also writes a field together with the record of
// the operation that wrote it, in one atomic step, and settles a lost
// operation (SPEC R). cache.SessionData implements it.
type OpHashes interface {
	Hashes
	// HSetOp writes field and records opID as done; an operation already
	// done writes nothing again, and an attempt older than the operation's
	// fence writes nothing and reports fenced.
	HSetOp(ctx context.Context, key, field, value, opsKey, opID string, generation int, ttl time.Duration) (fenced bool, err error)
	// SettleOp reports whether opID's write is recorded; when it is not, it
	// fences the operation against generation and older ones in the same
	// step, so that the lost attempt can never write.
	SettleOp(ctx context.Context, opsKey, opID string, generation int, ttl time.Duration) (applied bool, err error)
}

// OpsKey is the Redis hash of the operations that stored a session's
// secrets: field = operation id, value = "done:<generation>" or
// "fence:<generation>". It holds no names and no values. It shares Key's
// hash tag, the session id, since one script writes both (Redis Cluster,
// O1).
func OpsKey(sessionID string) string { return "toolround:{" + sessionID + "}:secretops" }

// ErrFenced is returned by PutOp for an attempt that a reconciliation
// fenced off after it was lost: it stored nothing.
var ErrFenced = errors.New("the operation was handed to a newer run; this attempt stored nothing")

// ErrNotSettleable is returned by SettleOp when the store cannot tell: its
// secrets are kept in one worker's memory, which another worker cannot see.
var ErrNotSettleable = errors.New("this worker keeps secrets in memory only; what another worker's lost attempt stored cannot be seen from here")

// Store keeps each session's secrets sealed at rest and implements
// tools.Secrets. It is safe for concurrent use.
type Store struct {
	key []byte
	rdb Hashes
	ttl time.Duration

	mu  sync.Mutex
	mem map[string]map[string]string
}

// NewStore returns a store that seals with key (32 bytes).
func NewStore(key []byte, opts StoreOptions) (*Store, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secrets: new store: key is %d bytes, want %d", len(key), KeySize)
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	s := &Store{key: append([]byte(nil), key...), rdb: opts.Hashes, ttl: ttl}
	if s.rdb == nil {
		s.mem = make(map[string]map[string]string)
	}
	return s, nil
}

// Key is the Redis hash of a session's secrets: field = name, value = the
// sealed value. Before hash tags it was toolround:secret:<session>, still
// read where it may exist (cache.LegacyKey).
func Key(sessionID string) string { return "toolround:{" + sessionID + "}:secret" }

// Shared reports whether the store is shared between workers (backed by Redis).
func (s *Store) Shared() bool { return s.rdb != nil }

// Seal seals plaintext with the store's key.
func (s *Store) Seal(plaintext string) (string, error) { return Seal(s.key, plaintext) }

// Put stores a secret. value may be plain, and is then sealed here, or
// already sealed (by SealArguments), and is then checked to open with the
// store's key and kept as it is. A value shorter than MinValueChars is
// refused with ErrTooShort.
func (s *Store) Put(ctx context.Context, sessionID, name, value string) error {
	return s.PutOp(ctx, sessionID, name, value, "", 0)
}

// PutOp is Put for operation opID of that generation (tools.Request): over
// Redis, the value and the record that opID stored it are written in one
// atomic step, an operation stores once, and an attempt that SettleOp
// fenced off stores nothing (ErrFenced). Without an operation id, or in
// memory, it is Put.
func (s *Store) PutOp(ctx context.Context, sessionID, name, value, opID string, generation int) error {
	sealed, plain := value, value
	if IsSealed(value) {
		var err error
		if plain, err = Open(s.key, value); err != nil {
			return fmt.Errorf("secrets: put %q: %w", name, err)
		}
	}
	if utf8.RuneCountInString(plain) < MinValueChars {
		return fmt.Errorf("secrets: put %q: %w", name, ErrTooShort)
	}
	if !IsSealed(value) {
		var err error
		if sealed, err = Seal(s.key, value); err != nil {
			return fmt.Errorf("secrets: put %q: %w", name, err)
		}
	}
	if s.rdb == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.mem[sessionID] == nil {
			s.mem[sessionID] = make(map[string]string)
		}
		s.mem[sessionID][name] = sealed
		return nil
	}
	if ops, ok := s.rdb.(OpHashes); ok && opID != "" {
		fenced, err := ops.HSetOp(ctx, Key(sessionID), name, sealed, OpsKey(sessionID), opID, generation, s.ttl)
		if err = unmark(err); err != nil {
			return fmt.Errorf("secrets: put %q: %w", name, err)
		}
		if fenced {
			return fmt.Errorf("secrets: put %q: %w", name, ErrFenced)
		}
		return nil
	}
	if err := unmark(s.rdb.HSet(ctx, Key(sessionID), name, sealed, s.ttl)); err != nil {
		return fmt.Errorf("secrets: put %q: %w", name, err)
	}
	return nil
}

// SettleOp decides what became of operation opID of a session after its
// attempt of that generation was lost: applied when the store recorded its
// write; otherwise the operation is fenced against that attempt in the
// same atomic step, so the attempt can never store anything, and the
// answer is not applied. A store in memory answers ErrNotSettleable.
func (s *Store) SettleOp(ctx context.Context, sessionID, opID string, generation int) (applied bool, err error) {
	ops, ok := s.rdb.(OpHashes)
	if !ok {
		return false, ErrNotSettleable
	}
	applied, err = ops.SettleOp(ctx, OpsKey(sessionID), opID, generation, s.ttl)
	if err != nil {
		return false, fmt.Errorf("secrets: settle operation: %w", err)
	}
	return applied, nil
}

// Get returns the plaintext of a session's secret. A missing secret is an
// error wrapping ErrNotFound that tells how to store it.
func (s *Store) Get(ctx context.Context, sessionID, name string) (string, error) {
	var sealed string
	if s.rdb == nil {
		s.mu.Lock()
		v, ok := s.mem[sessionID][name]
		s.mu.Unlock()
		if !ok {
			return "", notFound(name)
		}
		sealed = v
	} else {
		v, ok, err := s.rdb.HGet(ctx, Key(sessionID), name)
		if err = unmark(err); err != nil {
			return "", fmt.Errorf("secrets: get %q: %w", name, err)
		}
		if !ok {
			return "", notFound(name)
		}
		sealed = v
	}
	plain, err := Open(s.key, sealed)
	if err != nil {
		return "", fmt.Errorf("secrets: get %q: %w", name, err)
	}
	return plain, nil
}

// Names lists the names of a session's secrets, sorted.
func (s *Store) Names(ctx context.Context, sessionID string) ([]string, error) {
	var names []string
	if s.rdb == nil {
		s.mu.Lock()
		for n := range s.mem[sessionID] {
			names = append(names, n)
		}
		s.mu.Unlock()
	} else {
		var err error
		names, err = s.rdb.HKeys(ctx, Key(sessionID))
		err = unmark(err)
		if err != nil {
			return nil, fmt.Errorf("secrets: list names: %w", err)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Delete removes a session's secret; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, sessionID, name string) error {
	if s.rdb == nil {
		s.mu.Lock()
		delete(s.mem[sessionID], name)
		s.mu.Unlock()
		return nil
	}
	if err := unmark(s.rdb.HDel(ctx, Key(sessionID), name)); err != nil {
		return fmt.Errorf("secrets: delete %q: %w", name, err)
	}
	return nil
}

// unmark drops the retry mark (tools.Transient) that cache.SessionData puts
// on an error of a Redis it could not reach: store_secret runs at most once,
// and a tool that reads a secret fails rather than retries.
func unmark(err error) error {
	if tools.IsTransient(err) {
		return errors.Unwrap(err)
	}
	return err
}

func notFound(name string) error {
	return fmt.Errorf("secrets: %w: no secret %q in this session; store it with store_secret", ErrNotFound, name)
}
