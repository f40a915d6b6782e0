package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

// SealToolCalls seals, in place, the value of every store_secret call among
// calls, however the call is spelled: direct or through run_tool (args as
// an object or a JSON string), names with JSON escapes or in another letter
// case, keys in any letter case (secrets.SealToolCall). It is the one sealing
// step for every way calls reach a round: Client.Start (the starter and the
// Go API) calls it, and so must the console's API for the round inputs it
// submits and an agent run's model activity before its result enters
// history. A call that may hold a value but cannot be read as arguments is
// an error; the calls must not be submitted then.
func SealToolCalls(key []byte, calls []round.ToolCall) error {
	for i := range calls {
		c := &calls[i]
		sealed, err := secrets.SealToolCall(key, c.Function.Name, string(c.Function.Arguments))
		if err != nil {
			return round.Errorf(round.CodeBadRequest, "call %s: %w (the round was not submitted, so the value went nowhere)", c.ID, err)
		}
		c.Function.Arguments = round.Arguments(sealed)
	}
	return nil
}

// SealInput seals, in place, every store_secret value of the round's turn
// inside its format's own objects (Anthropic tool_use.input, Responses
// arguments, chat-completions arguments, and their run_tool wrappers), so
// that what the round runs and what its history holds are only the sealed
// form (F2). The input's slices are replaced, not written to: sealing a
// copy of an Input leaves the original as it was.
//
// A thinking block or reasoning item that holds one of the turn's
// store_secret values is sealed whole (round.Input.SealThoughts); Resolve
// opens it for the caller. Client.Start also seals one that holds a value
// stored in an earlier turn of the session (Options.StoredSecrets).
func SealInput(key []byte, in *round.Input) error {
	return sealInput(key, in, nil)
}

// SecretValues are the sessions' stored secrets (secrets.Store).
type SecretValues interface {
	Names(ctx context.Context, sessionID string) ([]string, error)
	Get(ctx context.Context, sessionID, name string) (string, error)
}

// sealTurn is SealInput that also seals a thinking block or reasoning item
// holding a value an earlier turn of the session stored (F2), read from
// Options.StoredSecrets when the turn has one. A store that does not answer
// then is an error: the round is not submitted with a thought unsealed.
func (c *Client) sealTurn(ctx context.Context, key []byte, in *round.Input) error {
	var stored []string
	if c.opts.StoredSecrets != nil && in.HasThoughts() {
		names, err := c.opts.StoredSecrets.Names(ctx, in.SessionID)
		if err != nil {
			return fmt.Errorf("read the session's stored secrets, to seal a thought that holds one (the round was not submitted): %w", err)
		}
		for _, name := range names {
			v, err := c.opts.StoredSecrets.Get(ctx, in.SessionID, name)
			if errors.Is(err, secrets.ErrNotFound) {
				continue // deleted since it was listed
			}
			if err != nil {
				return fmt.Errorf("read the session's stored secrets, to seal a thought that holds one (the round was not submitted): %w", err)
			}
			stored = append(stored, v)
		}
	}
	return sealInput(key, in, stored)
}

// sealInput is SealInput with the values of earlier turns that a thought
// must not hold either.
func sealInput(key []byte, in *round.Input, stored []string) error {
	values := stored
	err := in.MapArguments(func(c round.TurnCall) (round.Arguments, error) {
		values = append(values, secrets.ToolCallValues(key, c.Function.Name, string(c.Function.Arguments))...)
		sealed, err := secrets.SealToolCall(key, c.Function.Name, string(c.Function.Arguments))
		if err != nil {
			return "", round.Errorf(round.CodeBadRequest, "call %s: %w (the round was not submitted, so the value went nowhere)", c.ID, err)
		}
		return round.Arguments(sealed), nil
	})
	if err != nil {
		return err
	}
	if holds := secrets.Holds(values); holds != nil {
		err = in.SealThoughts(holds, func(s string) (string, error) { return secrets.Seal(key, s) })
		if err != nil {
			return round.Errorf(round.CodeBadRequest, "seal a thought that holds a store_secret value: %w (the round was not submitted)", err)
		}
	}
	return nil
}

// openThoughts opens, in the history of res, the thinking blocks and
// reasoning items that SealInput sealed.
func (c *Client) openThoughts(res *round.Result) {
	n := len(res.History) - len(res.Messages)
	if n <= 0 || res.Format.Name() == round.FormatOpenAI {
		return
	}
	key, err := c.secretKey()
	if err != nil {
		return
	}
	open := func(s string) (string, error) { return secrets.Open(key, s) }
	in := round.Input{Format: res.Format}
	if res.Format.Name() == round.FormatAnthropic {
		in.Turn = res.History[0].Raw
		if in.OpenThoughts(open) == nil {
			res.History[0].Raw = in.Turn
		}
		return
	}
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = res.History[i].Raw
	}
	in.Output, _ = json.Marshal(items)
	if in.OpenThoughts(open) != nil || json.Unmarshal(in.Output, &items) != nil || len(items) != n {
		return
	}
	for i := range items {
		res.History[i].Raw = items[i]
	}
}

// SealSecrets returns an Options.Prepare that seals store_secret values.
//
// Deprecated: Client.Start seals with the key of Options.Secrets whatever
// Prepare does; this is kept for callers that set it.
func SealSecrets(cfg secrets.Config) func(*round.Input) error {
	return func(in *round.Input) error {
		key, err := cfg.LoadKey()
		if err != nil {
			return fmt.Errorf("seal store_secret values: %w", err)
		}
		return SealInput(key, in)
	}
}

// Memo keys of the input digest that tells a resubmitted round from another
// one under the same workflow id.
const (
	// memoInputDigest holds InputDigest: keyed, so that nobody without the
	// key can test guesses of the input against it.
	memoInputDigest = "toolround_input_hmac"
	// legacyMemoInputHash is the unkeyed SHA-256 that rounds started by
	// earlier clients carry. It is still checked, never written.
	legacyMemoInputHash = "toolround_input_sha256"
)

// InputDigest identifies a round's input: an HMAC-SHA256 under a key derived
// from the secret key that clients and workers share, prefixed with an id of
// that key. Without the key, the digest tells nothing about the input, and
// a guess of a value cannot be tested. Sealed or not, a store_secret value
// counts by its plaintext (secrets.StableToolCall): sealing takes a fresh
// nonce each time, and a resubmission must still match.
func InputDigest(key []byte, in *round.Input) (string, error) {
	if len(key) != secrets.KeySize {
		return "", fmt.Errorf("input digest: key is %d bytes, want %d", len(key), secrets.KeySize)
	}
	stable := *in
	err := stable.MapArguments(func(c round.TurnCall) (round.Arguments, error) {
		if args, err := secrets.StableToolCall(key, c.Function.Name, string(c.Function.Arguments)); err == nil {
			return round.Arguments(args), nil
		}
		return c.Function.Arguments, nil
	})
	if err != nil {
		return "", fmt.Errorf("input digest: %w", err)
	}
	b, err := json.Marshal(&stable)
	if err != nil {
		return "", fmt.Errorf("encode round input: %w", err)
	}
	mac := hmac.New(sha256.New, derive(key, "toolround input digest v1"))
	mac.Write(b)
	return keyID(key) + ":" + hex.EncodeToString(mac.Sum(nil)), nil
}

func derive(key []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// keyID names a key without telling anything about it or the input.
func keyID(key []byte) string { return hex.EncodeToString(derive(key, "toolround key id")[:6]) }

// legacyInputHash is the digest earlier clients stored under
// legacyMemoInputHash; it is computed only to compare.
func legacyInputHash(in *round.Input) (string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encode round input: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// sameInput compares in with the digest memo of a round that already runs
// under its workflow id. Without a memo, or with a digest under another key,
// the input cannot be compared and the round is taken as the same.
func sameInput(memo map[string]string, key []byte, in *round.Input) (bool, error) {
	if have, ok := memo[memoInputDigest]; ok {
		id, _, _ := strings.Cut(have, ":")
		if id != keyID(key) {
			return true, nil
		}
		want, err := InputDigest(key, in)
		if err != nil {
			return false, err
		}
		return hmac.Equal([]byte(have), []byte(want)), nil
	}
	if have, ok := memo[legacyMemoInputHash]; ok {
		want, err := legacyInputHash(in)
		if err != nil {
			return false, err
		}
		return have == want, nil
	}
	return true, nil
}
