package testtools

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// MemBlobs is a blob store in memory, for workers in tests: Put gives
// references mem:1, mem:2, ...
type MemBlobs struct {
	mu sync.Mutex
	m  map[string]string
}

// Put stores content under a new reference.
func (b *MemBlobs) Put(_ context.Context, content string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]string{}
	}
	ref := fmt.Sprintf("mem:%d", len(b.m)+1)
	b.m[ref] = content
	return ref, nil
}

// Get is the content stored under ref.
func (b *MemBlobs) Get(_ context.Context, ref string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.m[ref]
	if !ok {
		return "", errors.New("no such blob")
	}
	return c, nil
}
