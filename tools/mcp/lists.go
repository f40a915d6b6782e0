package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool lists (E2). The worker lists a server's tools when it connects,
// again when the server sends notifications/tools/list_changed, and, when
// the list said how long it holds (ttlMs), once that time has passed, at
// the next call of one of the server's tools: the tools it then names for
// the first time are registered as the first ones were. A tool the server
// no longer lists stays registered; a call of it gets the server's own
// error. On 2026-07-28 sessions the SDK keeps each list result for its
// ttlMs, and a list_changed notification drops what it kept, so the
// re-list asks the server.

// noteList keeps when the server listed its tools and for how long it
// said the list holds (the wire tap reads ttlMs, which the SDK keeps to
// itself).
func (s *server) noteList(result []byte) {
	var r struct {
		TTLMs int64 `json:"ttlMs"`
	}
	_ = json.Unmarshal(result, &r)
	s.listTTL.Store(r.TTLMs)
	s.listedAt.Store(time.Now().UnixNano())
}

// relistIfStale lists the tools again, in the background, once the last
// list's ttlMs has passed.
func (s *server) relistIfStale() {
	ttl := time.Duration(s.listTTL.Load()) * time.Millisecond
	if ttl <= 0 || time.Since(time.Unix(0, s.listedAt.Load())) < ttl || !s.relisting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.relisting.Store(false)
		s.relist()
	}()
}

// list lists sess's tools, sorted by name.
func (s *server) list(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	var list []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}

// relist lists the tools of the live session again after the server said
// they changed, keeps those it names for the first time, and hands them
// to the manager.
func (s *server) relist() {
	s.mu.Lock()
	sess, closed := s.sess, s.closed
	s.mu.Unlock()
	if sess == nil || closed {
		return // the next connection lists them
	}
	list, err := s.list(context.Background(), sess)
	if err != nil {
		s.log.Warn("mcp: the server's tools changed, and listing them again failed", "err", err)
		return
	}
	s.mu.Lock()
	var added []string
	for _, t := range list {
		if !slices.ContainsFunc(s.tools, func(o *sdk.Tool) bool { return o.Name == t.Name }) {
			s.tools = append(s.tools, t)
			added = append(added, t.Name)
		}
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Name < s.tools[j].Name })
	listed := s.listed
	s.mu.Unlock()
	if len(added) == 0 {
		return
	}
	s.log.Info("mcp: the server added tools", "tools", added)
	if listed != nil {
		listed(s)
	}
}
