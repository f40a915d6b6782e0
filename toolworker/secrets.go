package toolworker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/keyfile"
	"github.com/toolround/toolround/tools/secrets"
)

// EnvToolKey holds a tool worker's queue key (base64 of 32 bytes), as
// `starter tool-key QUEUE` prints it: it opens the secrets the round
// seals for that queue's calls, and seals the answers to them (Y3, T9).
// Without it a tool worker that can read toolround's own secret key
// (TOOLROUND_SECRET_KEY, TOOLROUND_SECRET_KEY_FILE or its default file)
// derives the queue key from that one.
const EnvToolKey = "TOOLROUND_TOOL_KEY"

// FailureSealed is the error type of a failure whose message the tool
// worker sealed, because its call sent secrets.
const FailureSealed = "ToolFailureSealed"

// queueKey is the key of queue's sealed secrets: EnvToolKey, else derived
// from toolround's secret key when this process can read one. A missing
// default key file is not created: a tool worker never makes a key of its
// own.
func queueKey(queue string) ([]byte, error) {
	if v := os.Getenv(EnvToolKey); v != "" {
		key, err := keyfile.Decode(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvToolKey, err)
		}
		return key, nil
	}
	cfg := secrets.ConfigFromEnv()
	if cfg.Key == "" && cfg.KeyFile == "" {
		path, err := secrets.DefaultKeyFile()
		if err != nil {
			return nil, fmt.Errorf("no %s is set", EnvToolKey)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no %s is set; run `starter tool-key %s` where toolround's secret key is, and give this tool worker what it prints", EnvToolKey, queue)
		}
		cfg.KeyFile = path
	}
	master, err := cfg.LoadKey()
	if err != nil {
		return nil, err
	}
	return secrets.QueueKey(master, queue), nil
}

// taskQueue is the queue the activity of ctx was polled from.
func taskQueue(ctx context.Context) string {
	if activity.IsActivity(ctx) {
		return activity.GetInfo(ctx).TaskQueue
	}
	return ""
}

// openSecrets opens the call's secrets with the queue's key.
func openSecrets(ctx context.Context, sealed map[string]string) ([]byte, map[string]string, *CallResult) {
	queue := taskQueue(ctx)
	key, err := queueKey(queue)
	if err != nil {
		r := errorResult(ErrorSecretsUnavailable, "the call sends secrets, and this tool worker holds no key to open them, so it did not run: "+err.Error())
		return nil, nil, &r
	}
	values := make(map[string]string, len(sealed))
	for name, s := range sealed {
		v, err := secrets.Open(key, s)
		if err != nil {
			r := errorResult(ErrorSecretsUnavailable, fmt.Sprintf("secret %s does not open with this tool worker's key for queue %s (%s holds another queue's key, or toolround's key changed), so the call did not run", name, queue, EnvToolKey))
			return nil, nil, &r
		}
		values[name] = v
	}
	return key, values, nil
}

// withSecrets puts the values into every string of the arguments that
// holds a {{secret:NAME}} placeholder. A placeholder whose value the call
// did not send stays as it is.
func withSecrets(args json.RawMessage, values map[string]string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return approval.SecretPlaceholder.ReplaceAllStringFunc(v, func(m string) string {
				if value, ok := values[approval.SecretPlaceholder.FindStringSubmatch(m)[1]]; ok {
					return value
				}
				return m
			})
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	return json.Marshal(walk(v))
}

// answerSealed runs a call that sends secrets: it opens them, runs the
// function with their values in its arguments, and seals what it answers
// (the result, or a failure's message) with the queue's key, so that the
// round redacts the values before anything enters history (Y3, T9).
func (t Tool) answerSealed(ctx context.Context, in CallInput, args json.RawMessage) (CallResult, error) {
	key, values, refused := openSecrets(ctx, in.Secrets)
	if refused != nil {
		return *refused, nil
	}
	args, err := withSecrets(args, values)
	if err != nil {
		return errorResult(ErrorInvalidArguments, "invalid arguments: "+err.Error()), nil
	}
	res, err := t.respond(ctx, in, args)
	if err != nil {
		if temporal.IsCanceledError(err) {
			return CallResult{}, err
		}
		msg, serr := secrets.Seal(key, err.Error())
		if serr != nil {
			msg = "the tool failed; its message is withheld, since the call sent secrets"
		}
		return CallResult{}, temporal.NewApplicationError(msg, FailureSealed)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return CallResult{}, err
	}
	sealed, err := secrets.Seal(key, string(b))
	if err != nil {
		return CallResult{}, errors.New("the tool's result could not be sealed, so it is not returned")
	}
	return CallResult{V: WireVersion, Content: []Item{}, Sealed: sealed}, nil
}
