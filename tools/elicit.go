package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// Elicitation is a request for input that an MCP server makes during a
// call (SPEC E1): a form built from Schema, or a URL for the person to open
// (never opened by the system).
type Elicitation struct {
	Server  string
	Mode    string // "form" or "url"
	Message string
	Schema  json.RawMessage
	URL     string
	// ElicitationID is a url request's id, as the server gave it.
	ElicitationID string
}

// ElicitResult is the person's answer: Action accept (with Content),
// decline or cancel.
type ElicitResult struct {
	Action  string
	Content map[string]any
}

// Elicitor asks a person for an elicitation's answer and waits for it.
type Elicitor func(ctx context.Context, e Elicitation) (ElicitResult, error)

type elicitorKey struct{}

// WithElicitor returns a context whose Elicit calls fn. The engine sets it
// for each call, so that an MCP server's request reaches the call's round.
func WithElicitor(ctx context.Context, fn Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, fn)
}

// ErrNoElicitor: the call was made where no person can be asked.
var ErrNoElicitor = errors.New("nobody can be asked for input here")

// Elicit asks through the context's Elicitor.
func Elicit(ctx context.Context, e Elicitation) (ElicitResult, error) {
	fn, ok := ctx.Value(elicitorKey{}).(Elicitor)
	if !ok || fn == nil {
		return ElicitResult{}, ErrNoElicitor
	}
	return fn(ctx, e)
}
