package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// store_secret values are sealed inside each format's own objects (F2):
// Anthropic tool_use.input, Responses arguments, and their run_tool
// wrappers, so that what the round runs and its history hold only the
// sealed form; the caller's input stays as it was.
func TestSealInputInEveryFormat(t *testing.T) {
	key := testKey(t)
	anthropic := &round.Input{SessionID: "s1", RunID: "r1", Round: 1, Format: round.FormatAnthropic,
		Turn: json.RawMessage(`{"role":"assistant","content":[
			{"type":"thinking","thinking":"t","signature":"s"},
			{"type":"tool_use","id":"toolu_1","name":"store_secret","input":{"name":"A","value":"` + plain + `"}},
			{"type":"tool_use","id":"toolu_2","name":"run_tool","input":{"name":"store\u005fsecret","args":{"name":"B","Value":"` + plain + `"}}},
			{"type":"tool_use","id":"toolu_3","name":"read_files","input":{"paths":["a.txt"]}}]}`)}
	responses := &round.Input{SessionID: "s1", RunID: "r1", Round: 1, Format: round.FormatResponses,
		Output: json.RawMessage(`[{"type":"reasoning","id":"rs","summary":[]},
			{"type":"function_call","call_id":"call_1","name":"store_secret","arguments":"{\"name\":\"A\",\"value\":\"` + plain + `\"}"},
			{"type":"function_call","call_id":"call_2","name":"run_tool","arguments":"{\"name\":\"store_secret\",\"args\":\"{\\\"name\\\":\\\"B\\\",\\\"value\\\":\\\"` + plain + `\\\"}\"}"},
			{"type":"function_call","call_id":"call_3","name":"read_files","arguments":"{\"paths\":[\"a.txt\"]}"}]`)}
	for _, in := range []*round.Input{anthropic, responses} {
		t.Run(string(in.Format), func(t *testing.T) {
			require.NoError(t, in.Validate())
			given, err := json.Marshal(in)
			require.NoError(t, err)
			require.Contains(t, string(given), plain)

			sealed := *in
			require.NoError(t, SealInput(key, &sealed))
			b, err := json.Marshal(&sealed)
			require.NoError(t, err)
			require.NotContains(t, string(b), plain)
			again, err := json.Marshal(in)
			require.NoError(t, err)
			require.Equal(t, string(given), string(again), "the caller's input is not changed")
			calls := sealed.ToolCalls()
			require.Len(t, calls, 3)
			require.JSONEq(t, `{"paths":["a.txt"]}`, string(calls[2].Function.Arguments))

			// The result's history is rebuilt from the sealed turn.
			res := round.Output{Format: sealed.Format, Turn: sealed.TurnJSON(),
				Results: []round.CallResult{{CallID: calls[0].ID, Tool: "store_secret", Status: round.StatusOK, Content: "stored"}}}.Result()
			h, err := json.Marshal(res.History)
			require.NoError(t, err)
			require.NotContains(t, string(h), plain)

			// A resubmission attaches: the digest counts a value by its plaintext.
			d1, err := InputDigest(key, in)
			require.NoError(t, err)
			d2, err := InputDigest(key, &sealed)
			require.NoError(t, err)
			require.Equal(t, d1, d2)
		})
	}
}

// Resolve puts a large result's content back into the messages and the
// history of the round's format.
func TestResolveInEveryFormat(t *testing.T) {
	for _, f := range round.Formats {
		t.Run(string(f), func(t *testing.T) {
			in := &round.Input{Format: f, Assistant: round.Message{Role: "assistant", ToolCalls: []round.ToolCall{toolCall("c1", "fetch_page", `{}`)}}}
			switch f {
			case round.FormatAnthropic:
				in.Assistant = round.Message{}
				in.Turn = json.RawMessage(`{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"fetch_page","input":{}}]}`)
			case round.FormatResponses:
				in.Assistant = round.Message{}
				in.Output = json.RawMessage(`[{"type":"function_call","call_id":"c1","name":"fetch_page","arguments":"{}"}]`)
			}
			out := round.Output{Assistant: in.Assistant, Results: []round.CallResult{{CallID: "c1", Tool: "fetch_page", Status: round.StatusOK,
				Content: round.StoredPreview("the whole page", "blob:1", 3), ContentRef: "blob:1"}}}
			if f != round.FormatOpenAI {
				out.Format, out.Turn = f, in.TurnJSON()
			}
			res := out.Result()
			c := New(nil, Options{Blobs: blobMap{"blob:1": "the whole page"}})
			c.Resolve(t.Context(), &res)
			m, err := json.Marshal(res.Messages)
			require.NoError(t, err)
			require.Contains(t, string(m), "the whole page")
			h, err := json.Marshal(res.History)
			require.NoError(t, err)
			require.Contains(t, string(h), "the whole page")
			require.Contains(t, string(h), "fetch_page", "the turn stays first in the history")
		})
	}
}

type blobMap map[string]string

func (b blobMap) Get(_ context.Context, ref string) (string, error) {
	if v, ok := b[ref]; ok {
		return v, nil
	}
	return "", errors.New("no such blob")
}

// F3 from the Go API: the tools array for a provider in each format.
func TestToolsInEachFormat(t *testing.T) {
	base, err := Tools("openai")
	require.NoError(t, err)
	for _, f := range round.Formats {
		ts, err := ToolsIn("openai", f)
		require.NoError(t, err)
		require.Equal(t, f, ts.Format)
		require.Len(t, ts.Tools, len(base.Tools))
		require.Equal(t, base.Deferred, ts.Deferred)
		require.Equal(t, base.TurnContext, ts.TurnContext)
	}
	a, err := ToolsIn("claude-code", round.FormatAnthropic)
	require.NoError(t, err)
	for _, tool := range a.Tools {
		at, ok := tool.(tools.AnthropicTool)
		require.True(t, ok)
		require.NotEmpty(t, at.InputSchema, at.Name)
	}
	_, err = ToolsIn("openai", "gemini")
	require.Error(t, err)
}

// A thinking block or reasoning item that holds a store_secret value of
// the turn is sealed with it (F2): the round's history holds only the
// sealed form, and Resolve gives the caller the block as the model wrote
// it, signature and all, to send back.
func TestSealInputSealsThoughtsHoldingAValue(t *testing.T) {
	key := testKey(t)
	anthropic := &round.Input{SessionID: "s1", RunID: "r1", Round: 1, Format: round.FormatAnthropic,
		Turn: json.RawMessage(`{"role":"assistant","content":[
			{"type":"thinking","thinking":"the user's key is ` + plain + `, store it","signature":"sig-a"},
			{"type":"tool_use","id":"toolu_1","name":"store_secret","input":{"name":"A","value":"` + plain + `"}}]}`)}
	responses := &round.Input{SessionID: "s1", RunID: "r1", Round: 1, Format: round.FormatResponses,
		Output: json.RawMessage(`[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"key ` + plain + `"}],"encrypted_content":"enc"},
			{"type":"function_call","call_id":"call_1","name":"run_tool","arguments":"{\"name\":\"store_secret\",\"args\":{\"name\":\"B\",\"value\":\"` + plain + `\"}}"}]`)}
	for _, in := range []*round.Input{anthropic, responses} {
		t.Run(string(in.Format), func(t *testing.T) {
			sealed := *in
			require.NoError(t, SealInput(key, &sealed))
			require.NotContains(t, string(sealed.TurnJSON()), plain)
			calls := sealed.ToolCalls()
			res := round.Output{Format: sealed.Format, Turn: sealed.TurnJSON(),
				Results: []round.CallResult{{CallID: calls[0].ID, Tool: "store_secret", Status: round.StatusOK, Content: "stored"}}}.Result()
			h, err := json.Marshal(res)
			require.NoError(t, err)
			require.NotContains(t, string(h), plain)

			c := &Client{key: key}
			c.Resolve(context.Background(), &res)
			h, err = json.Marshal(res.History)
			require.NoError(t, err)
			require.Contains(t, string(h), plain, "the caller gets the thought back to send to the model")
			require.NotContains(t, string(h), round.ThoughtWithheld)
		})
	}
}

// storedSecrets is a session's secret store for the tests.
type storedSecrets struct {
	values map[string]map[string]string
	err    error
}

func (s storedSecrets) Names(_ context.Context, session string) ([]string, error) {
	var out []string
	for n := range s.values[session] {
		out = append(out, n)
	}
	return out, s.err
}

func (s storedSecrets) Get(_ context.Context, session, name string) (string, error) {
	return s.values[session][name], s.err
}

// TestSealTurnSealsThoughtsHoldingAnEarlierValue: a thinking block or
// reasoning item that holds a value an earlier turn of the session stored
// is sealed too, though this turn stores nothing (F2); a store that does
// not answer refuses the round, and a turn without thoughts never asks.
func TestSealTurnSealsThoughtsHoldingAnEarlierValue(t *testing.T) {
	key := testKey(t)
	const earlier = "earlier-turn-value-4711"
	anthropic := &round.Input{SessionID: "s1", RunID: "r1", Round: 2, Format: round.FormatAnthropic,
		Turn: json.RawMessage(`{"role":"assistant","content":[
			{"type":"thinking","thinking":"I stored ` + earlier + ` before","signature":"sig-a"},
			{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"1+1"}}]}`)}
	responses := &round.Input{SessionID: "s1", RunID: "r1", Round: 2, Format: round.FormatResponses,
		Output: json.RawMessage(`[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"the key ` + earlier + `"}],"encrypted_content":"enc"},
			{"type":"function_call","call_id":"call_1","name":"calculate","arguments":"{\"expression\":\"1+1\"}"}]`)}
	store := storedSecrets{values: map[string]map[string]string{"s1": {"api": earlier}}}
	for _, in := range []*round.Input{anthropic, responses} {
		t.Run(string(in.Format), func(t *testing.T) {
			c := &Client{key: key, opts: Options{StoredSecrets: store}}
			sealed := *in
			require.NoError(t, c.sealTurn(t.Context(), key, &sealed))
			require.NotContains(t, string(sealed.TurnJSON()), earlier)
			require.Contains(t, string(sealed.TurnJSON()), round.ThoughtWithheld)

			other := *in
			other.SessionID = "s2" // a session that stored nothing
			require.NoError(t, c.sealTurn(t.Context(), key, &other))
			require.Equal(t, string(in.TurnJSON()), string(other.TurnJSON()))

			down := &Client{key: key, opts: Options{StoredSecrets: storedSecrets{err: errors.New("redis down")}}}
			again := *in
			require.ErrorContains(t, down.sealTurn(t.Context(), key, &again), "redis down")
		})
	}
	plainTurn := &round.Input{SessionID: "s1", RunID: "r1", Round: 2, Format: round.FormatAnthropic,
		Turn: json.RawMessage(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"1+1"}}]}`)}
	down := &Client{key: key, opts: Options{StoredSecrets: storedSecrets{err: errors.New("redis down")}}}
	require.NoError(t, down.sealTurn(t.Context(), key, plainTurn), "a turn without thoughts does not ask the store")
}

// TestResolveLoadsImages: Resolve loads the bytes of a result's images
// from the blob store, so that the messages and the history carry them in
// the format's own objects (in format openai only the result does); an
// image above round.MaxImageBytes stays a reference (F2).
func TestResolveLoadsImages(t *testing.T) {
	img := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe}
	b64 := base64.StdEncoding.EncodeToString(img)
	for _, f := range round.Formats {
		t.Run(string(f), func(t *testing.T) {
			out := round.Output{Assistant: round.Message{Role: "assistant", ToolCalls: []round.ToolCall{toolCall("c1", "shot", `{}`), toolCall("c2", "shot", `{}`)}},
				Results: []round.CallResult{
					{CallID: "c1", Tool: "shot", Status: round.StatusOK, Content: "[image image/png, 7 bytes]", Images: []round.Image{{MIMEType: "image/png", Size: len(img), Ref: "blob:img"}}},
					{CallID: "c2", Tool: "shot", Status: round.StatusOK, Content: "[image image/png, big]", Images: []round.Image{{MIMEType: "image/png", Size: round.MaxImageBytes + 1, Ref: "blob:big"}}},
				}}
			switch f {
			case round.FormatAnthropic:
				out.Format, out.Assistant, out.Turn = f, round.Message{}, json.RawMessage(`[{"type":"tool_use","id":"c1","name":"shot","input":{}},{"type":"tool_use","id":"c2","name":"shot","input":{}}]`)
			case round.FormatResponses:
				out.Format, out.Assistant, out.Turn = f, round.Message{}, json.RawMessage(`[{"type":"function_call","call_id":"c1","name":"shot","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"shot","arguments":"{}"}]`)
			}
			res := out.Result()
			before, err := json.Marshal(res.Messages)
			require.NoError(t, err)
			require.NotContains(t, string(before), b64, "without Resolve the messages name the reference")
			c := New(nil, Options{Blobs: blobMap{"blob:img": b64, "blob:big": "not loaded"}})
			c.Resolve(t.Context(), &res)
			require.Equal(t, img, res.Results[0].Images[0].Data)
			require.Empty(t, res.Results[1].Images[0].Data, "an image above MaxImageBytes goes by reference only")
			m, err := json.Marshal(res.Messages)
			require.NoError(t, err)
			require.Contains(t, string(m), "kept by reference only: blob:big")
			require.NotContains(t, string(m), "not loaded")
			h, err := json.Marshal(res.History)
			require.NoError(t, err)
			if f == round.FormatOpenAI {
				// A chat tool message holds text only: the image is its
				// text line there, the bytes are in the result (F2).
				require.NotContains(t, string(m), b64)
				require.Len(t, res.Messages, 2, "one tool message per call")
				return
			}
			require.Contains(t, string(m), b64)
			require.Contains(t, string(h), b64)
		})
	}
}
