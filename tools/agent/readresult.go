package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/toolround/toolround/tools"
)

// Blobs reads the blob store where an agent run's context budget keeps the
// tool results it replaced (B3).
type Blobs interface {
	Get(ctx context.Context, ref string) (string, error)
}

// errNotThisRun is read_result's answer for every reference the run's
// budget did not replace, whether or not it exists (B3).
var errNotThisRun = errors.New("not_this_run: this reference is not one of this run's shortened results")

type readResultArgs struct {
	Ref    string `json:"ref"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (t *toolset) readResult() tools.Definition {
	most := t.cfg.ContextTokens // a quarter of the budget: tokens/4, at 4 bytes a token
	return tools.Definition{
		Name: tools.ReadResult,
		Description: "Read back a tool result that was shortened to keep the conversation within the context budget: " +
			"its preview names the reference. offset and limit are in bytes; read a long result in parts.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"ref":    {Description: "the reference the shortened result names", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(200), Type: "string"},
			"offset": {Description: "the first byte to read (default 0)", Minimum: tools.Ptr(0.0), Type: "integer"},
			"limit":  {Description: fmt.Sprintf("at most this many bytes (default and most %d)", most), Minimum: tools.Ptr(1.0), Maximum: tools.Ptr(float64(most)), Type: "integer"},
		}, "ref")),
		Concurrent: false,
		SideEffect: tools.ReadOnly,
		Confirm:    tools.ConfirmNever,
		Timeout:    30 * time.Second,
		Source:     tools.SourceBuiltin,
		NoDedupe:   true, // G: its results never enter the dedupe map (P1.3)
		Handler:    tools.Typed(t.handleReadResult),
	}
}

func (t *toolset) handleReadResult(ctx context.Context, req tools.Request, a readResultArgs) (tools.Result, error) {
	// Only the references this run's budget replaced; any other gets the
	// same answer, so a call learns nothing of what the store holds.
	if !slices.Contains(req.ResultRefs, a.Ref) {
		return tools.Result{}, errNotThisRun
	}
	if t.cfg.Blobs == nil {
		return tools.Result{}, errors.New("this worker has no blob store (REDIS_URL), so shortened results cannot be read back")
	}
	most := t.cfg.ContextTokens
	if a.Offset < 0 || a.Limit < 0 || a.Limit > most {
		return tools.Result{}, fmt.Errorf("offset must be 0 or more and limit 1..%d", most)
	}
	if a.Limit == 0 {
		a.Limit = most
	}
	content, err := t.cfg.Blobs.Get(ctx, a.Ref)
	if err != nil {
		return tools.Result{}, fmt.Errorf("the result %s cannot be read: %w", a.Ref, err)
	}
	if a.Offset > len(content) {
		return tools.Result{}, fmt.Errorf("offset %d is past the result's end (%d bytes)", a.Offset, len(content))
	}
	start, end := a.Offset, min(len(content), a.Offset+a.Limit)
	for start < end && !utf8.RuneStart(content[start]) {
		start++
	}
	for end < len(content) && end > start && !utf8.RuneStart(content[end]) {
		end--
	}
	part := content[start:end]
	if end < len(content) {
		part += fmt.Sprintf("\n[read_result: bytes %d-%d of %d; read on with offset %d]", start, end, len(content), end)
	}
	return tools.Result{Content: part}, nil
}
