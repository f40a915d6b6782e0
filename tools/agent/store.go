package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolround/toolround/tools"
)

// Key kinds under "toolround:<kind>:<session_id>".
func todoKey(sessionID string) string   { return "toolround:todo:" + sessionID }
func errorsKey(sessionID string) string { return "toolround:errors:" + sessionID }
func resultKey(sessionID string) string { return "toolround:result:" + sessionID }

// Store is where the tools keep per-session data (see the package
// comment); cache.SessionData implements it over Redis. Errors are wrapped
// by the callers with the tool's name; a store marks with tools.Transient
// the failures worth a retry. A ttl > 0 makes a written key expire that long
// after its last write; ttl <= 0 keeps it.
type Store interface {
	GetString(ctx context.Context, key string) (string, bool, error)
	SetString(ctx context.Context, key, value string, ttl time.Duration) error
	HSet(ctx context.Context, key, field, value string, ttl time.Duration) error
	HGet(ctx context.Context, key, field string) (string, bool, error)
	// AppendOnce adds record (a JSON object) to the list at key unless a
	// record with the same "id" is already there (a retried attempt), then
	// keeps the newest max.
	AppendOnce(ctx context.Context, key, id, record string, max int, ttl time.Duration) (added bool, err error)
	// List returns the newest n elements of a list, oldest first; n <= 0 means all.
	List(ctx context.Context, key string, n int) ([]string, error)
}

// memStore is the in-process fallback when no Store is configured. It is
// not shared between workers and ignores the TTL.
type memStore struct {
	mu      sync.Mutex
	strings map[string]string
	hashes  map[string]map[string]string
	lists   map[string][]memRecord
}

type memRecord struct{ id, record string }

func newMemStore() *memStore {
	return &memStore{
		strings: make(map[string]string),
		hashes:  make(map[string]map[string]string),
		lists:   make(map[string][]memRecord),
	}
}

func (s *memStore) GetString(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.strings[key]
	return v, ok, nil
}

func (s *memStore) SetString(_ context.Context, key, value string, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strings[key] = value
	return nil
}

func (s *memStore) HSet(_ context.Context, key, field, value string, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hashes[key] == nil {
		s.hashes[key] = make(map[string]string)
	}
	s.hashes[key][field] = value
	return nil
}

func (s *memStore) HGet(_ context.Context, key, field string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.hashes[key][field]
	return v, ok, nil
}

func (s *memStore) AppendOnce(_ context.Context, key, id, record string, max int, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.lists[key] {
		if r.id == id {
			return false, nil
		}
	}
	l := append(s.lists[key], memRecord{id, record})
	if max > 0 && len(l) > max {
		l = append([]memRecord(nil), l[len(l)-max:]...)
	}
	s.lists[key] = l
	return true, nil
}

func (s *memStore) List(_ context.Context, key string, n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[key]
	if n > 0 && len(l) > n {
		l = l[len(l)-n:]
	}
	out := make([]string, len(l))
	for i, r := range l {
		out[i] = r.record
	}
	return out, nil
}

// storeError wraps a storage failure with what was being done; a failure the
// store marked as transient stays so (the engine retries it for read-only
// and idempotent tools).
func storeError(op string, err error) error {
	return fmt.Errorf("%s: %w", op, err)
}

// needSession refuses calls without a session id: every record here is per
// session.
func needSession(req tools.Request) error {
	if req.SessionID == "" {
		return errors.New("the call has no session id; per-session data cannot be kept without one")
	}
	return nil
}
