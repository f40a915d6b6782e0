package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/preview"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools/files"
)

// FilePreviewer is a Backend that reads, at display time, a file a
// waiting call would overwrite (T14). A Backend without it shows no
// preview.
type FilePreviewer interface {
	// PreviewFile reads the size and first lines of path in session's
	// workspace on the host that holds it (placed: WORKSPACE_PLACEMENT is
	// host), never recording them.
	PreviewFile(ctx context.Context, session, path string, placed bool) (files.Preview, error)
}

// ErrNotBound: under WORKSPACE_PLACEMENT=host the session's workspace is
// bound to no host yet, so no host holds a file of it.
var ErrNotBound = errors.New("the session's workspace is bound to no host yet")

// PreviewFile runs the preview activity, through a short workflow on
// TASK_QUEUE, on the queue of the workspace's host: <TASK_QUEUE>@<HOST_ID> of its binding
// under placement, else TASK_QUEUE.
func (b *TemporalBackend) PreviewFile(ctx context.Context, session, path string, placed bool) (files.Preview, error) {
	q := b.opts.TaskQueue
	if placed {
		bd, ok, err := placement.Get(ctx, b.tc, session)
		if err != nil {
			return files.Preview{}, fmt.Errorf("the workspace's binding: %w", err)
		}
		if !ok || bd.Host == "" {
			return files.Preview{}, ErrNotBound
		}
		q = placement.HostQueue(b.opts.TaskQueue, bd.Host)
	}
	return preview.Run(ctx, b.tc, b.opts.Namespace, b.opts.TaskQueue, q, session, path)
}

// filePreview is what a card and the link page show of the file a call
// would overwrite: the preview, or why there is none.
type filePreview struct {
	Exists  bool     `json:"exists"`
	Size    int64    `json:"size"`
	KeyFile bool     `json:"key_file,omitempty"`
	Binary  bool     `json:"binary,omitempty"`
	Lines   []string `json:"lines,omitempty"`
	More    bool     `json:"more,omitempty"`
	// Unavailable says why the file could not be read.
	Unavailable string `json:"unavailable,omitempty"`
}

// overwritePath is the path a waiting call writes whole, as edit_file
// without old_text does: a "path" and a "new_text" and no "old_text",
// whichever tool it is (as the card's diff reads them); "" for any other
// call.
func overwritePath(pc PendingCall) string {
	if !pc.NeedsDecision() {
		return ""
	}
	var a struct {
		Path    string           `json:"path"`
		OldText *json.RawMessage `json:"old_text"`
		NewText *json.RawMessage `json:"new_text"`
	}
	if json.Unmarshal([]byte(pc.Arguments), &a) != nil || a.Path == "" || a.OldText != nil || a.NewText == nil {
		return ""
	}
	return a.Path
}

// previewOf reads the preview of the file pc would overwrite; nil when pc
// overwrites no file or the backend reads none.
func (s *Server) previewOf(ctx context.Context, session string, pc PendingCall) *filePreview {
	p := overwritePath(pc)
	fp, ok := s.b.(FilePreviewer)
	if p == "" || !ok {
		return nil
	}
	got, err := fp.PreviewFile(ctx, session, p, s.opts.Placement == placement.Host)
	if err != nil {
		s.log.Warn("file preview unavailable", "session", session, "call_id", pc.CallID, "err", err)
		return &filePreview{Unavailable: err.Error()}
	}
	for i := range got.Lines {
		got.Lines[i] = text.Visible(got.Lines[i])
	}
	return &filePreview{Exists: got.Exists, Size: got.Size, KeyFile: got.KeyFile, Binary: got.Binary, Lines: got.Lines, More: got.More}
}

// withPreviews reads the previews of cards at once, each bounded by
// preview.Timeout, so a page waits for the slowest, not their sum. Only a
// card its reader may decide on gets one: the preview is for a person who
// decides (T14), and an agent token that could ask for an overwrite of any
// path reads no file through it.
func (s *Server) withPreviews(ctx context.Context, cards []card) {
	var wg sync.WaitGroup
	for i := range cards {
		if !cards[i].CanDecide || overwritePath(cards[i].P) == "" {
			continue
		}
		wg.Add(1)
		go func(c *card) {
			defer wg.Done()
			c.Preview = s.previewOf(ctx, c.SessionID, c.P)
			if p := c.Preview; p != nil && !p.Exists && p.Unavailable == "" {
				// No file there: the diff's heading says so, in one line.
				c.DiffNote = "creates the file: there is none there now"
			}
		}(&cards[i])
	}
	wg.Wait()
}
