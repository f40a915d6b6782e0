package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/toolworker"
)

// ToolSecretStore is the sessions' secret store as a user tool's calls
// use it (Y3): the values a call sends are sealed for its tool worker's
// queue, and that tool worker's sealed answer is opened here.
type ToolSecretStore interface {
	Get(ctx context.Context, sessionID, name string) (string, error)
	SealFor(queue, plaintext string) (string, error)
	OpenFrom(queue, sealed string) (string, error)
}

// errNoSecretStore: the worker has no secret store, so no call can send a
// secret.
var errNoSecretStore = errors.New("no secret store is configured on this worker")

// ToolSecrets seals, for a user tool's queue, the values of the secrets
// its call sends; a name the session has not stored is Missing. Only the
// sealed values leave this activity, so only they enter history (T9).
func (a *Activities) ToolSecrets(ctx context.Context, in wire.ToolSecretsInput) (wire.ToolSecretsOutput, error) {
	if a.SecretStore == nil {
		return wire.ToolSecretsOutput{}, temporal.NewNonRetryableApplicationError(errNoSecretStore.Error(), "NoSecretStore", nil)
	}
	out := wire.ToolSecretsOutput{Sealed: make(map[string]string, len(in.Names))}
	for _, name := range in.Names {
		v, err := a.SecretStore.Get(ctx, in.SessionID, name)
		if errors.Is(err, secrets.ErrNotFound) || (err == nil && v == "") {
			return wire.ToolSecretsOutput{Missing: name}, nil
		}
		if err != nil {
			return wire.ToolSecretsOutput{}, fmt.Errorf("secret %s: %w", name, err)
		}
		if out.Sealed[name], err = a.SecretStore.SealFor(in.Queue, v); err != nil {
			return wire.ToolSecretsOutput{}, err
		}
	}
	return out, nil
}

// OpenToolResult opens what a tool worker sealed in answer to a call that
// sent secrets and redacts their values from it, in every encoding the
// redactor reads (T9): a result's text and JSON items, or a failure's
// message (as one text item). A JSON item that is not JSON once redacted
// becomes a text item. What does not open is an error.
func (a *Activities) OpenToolResult(ctx context.Context, in wire.OpenToolResultInput) (toolworker.CallResult, error) {
	if a.SecretStore == nil {
		return toolworker.CallResult{}, temporal.NewNonRetryableApplicationError(errNoSecretStore.Error(), "NoSecretStore", nil)
	}
	plain, err := a.SecretStore.OpenFrom(in.Queue, in.Sealed)
	if err != nil {
		return toolworker.CallResult{}, temporal.NewNonRetryableApplicationError("the answer does not open with the queue's key: "+err.Error(), "SealedAnswer", nil)
	}
	values := make(map[string]string, len(in.Names))
	for _, name := range in.Names {
		if v, err := a.SecretStore.Get(ctx, in.SessionID, name); err == nil {
			values[name] = v
		} else if !errors.Is(err, secrets.ErrNotFound) {
			return toolworker.CallResult{}, fmt.Errorf("secret %s, to redact it: %w", name, err)
		}
	}
	red := secrets.NewRedactor(values)
	if in.Failure {
		return toolworker.CallResult{V: toolworker.WireVersion, Content: []toolworker.Item{toolworker.Text(red.Redact(plain))}}, nil
	}
	var res toolworker.CallResult
	if err := json.Unmarshal([]byte(plain), &res); err != nil {
		return toolworker.CallResult{}, temporal.NewNonRetryableApplicationError("the opened answer is not a result: "+err.Error(), "SealedAnswer", nil)
	}
	for i, it := range res.Content {
		switch it.Type {
		case "text":
			res.Content[i].Text = red.Redact(it.Text)
		case "json":
			if red.Contains(string(it.JSON)) {
				if r := red.Redact(string(it.JSON)); json.Valid([]byte(r)) {
					res.Content[i].JSON = json.RawMessage(r)
				} else {
					res.Content[i] = toolworker.Text(r)
				}
			}
		}
	}
	res.Sealed = ""
	return res, nil
}
