package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

type recordSink struct {
	mu     sync.Mutex
	events []round.Event
}

func (r *recordSink) Publish(_ context.Context, _ string, events []round.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
	return nil
}

type storeBlobs struct{ m map[string]string }

func (s *storeBlobs) Put(_ context.Context, c string) (string, error) {
	ref := fmt.Sprintf("toolround:blob:%d", len(s.m)+1)
	s.m[ref] = c
	return ref, nil
}
func (s *storeBlobs) Get(_ context.Context, ref string) (string, error) { return s.m[ref], nil }

// TestModelCallStreamsTokensAndSealsSecrets: content tokens reach the event
// stream in batches, tool-call argument deltas never do, and a
// store_secret value is sealed before the output (what enters history)
// is returned; stored contents are read back for the model.
func TestModelCallStreamsTokensAndSealsSecrets(t *testing.T) {
	const secret = "hunter2-very-secret-value"
	var sent llm.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, json.NewDecoder(r.Body).Decode(&sent))
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range strings.Split("I will store the key now.", " ") {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", tok+" ")
		}
		args := fmt.Sprintf(`{"name":"api","value":"%s"}`, secret)
		half := len(args) / 2
		delta := func(id, name, part, finish string) string {
			call := map[string]any{"index": 0, "function": map[string]any{"name": name, "arguments": part}}
			if id != "" {
				call["id"], call["type"] = id, "function"
			}
			ch := map[string]any{"delta": map[string]any{"tool_calls": []any{call}}}
			if finish != "" {
				ch["finish_reason"] = finish
			}
			b, _ := json.Marshal(map[string]any{"choices": []any{ch}})
			return string(b)
		}
		fmt.Fprintf(w, "data: %s\n\n", delta("c1", "store_secret", args[:half], ""))
		fmt.Fprintf(w, "data: %s\n\n", delta("", "", args[half:], "tool_calls"))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m"}, llm.EnvModel)
	require.NoError(t, err)
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	sink := &recordSink{}
	blobs := &storeBlobs{m: map[string]string{"toolround:blob:9": "the whole result", "toolround:blob:8": `{"paths":["whole.txt"]}`}}
	m := &Model{LLM: client, Events: sink, Blobs: blobs, FlushBytes: 8, SecretKey: func() ([]byte, error) { return key, nil }}

	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})
	in := wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 3, Round: 2, Provider: "openai",
		Messages: []round.AgentMessage{
			{Role: "user", Content: "store my key"},
			{Role: "assistant", ToolCalls: []round.ToolCall{{ID: "x", Function: round.FunctionCall{Name: "read_files", Arguments: "preview"}}, {ID: "y", Function: round.FunctionCall{Name: "read_files", Arguments: "{}"}}}, ArgRefs: []string{"toolround:blob:8"}},
			{Role: "tool", ToolCallID: "x", Tool: "read_files", Content: "[read_files] prev", ContentRef: "toolround:blob:9"},
			{Role: "tool", ToolCallID: "y", Tool: "read_files", Note: "(repeats the result of round 1 of this run)", Content: "[read_files] (repeats the result of round 1 of this run)\nprev", ContentRef: "toolround:blob:9"},
		}}
	val, err := env.ExecuteActivity(wire.ActivityModelCall, in)
	require.NoError(t, err)
	var out wire.ModelOutput
	require.NoError(t, val.Get(&out))

	require.Equal(t, `{"paths":["whole.txt"]}`, sent.Messages[2].ToolCalls[0].Function.Arguments, "stored arguments are read back for the model")
	require.Equal(t, "[read_files] the whole result", sent.Messages[3].Content, "a stored content is read back for the model")
	require.Equal(t, "[read_files] (repeats the result of round 1 of this run)\nthe whole result", sent.Messages[4].Content, "a repeat's note stays before its content read back (U3)")
	require.Equal(t, "system", sent.Messages[0].Role)
	require.Equal(t, "I will store the key now. ", out.Message.Content)
	require.Len(t, out.Message.ToolCalls, 1)
	args := string(out.Message.ToolCalls[0].Function.Arguments)
	var fields map[string]string
	require.NoError(t, json.Unmarshal([]byte(args), &fields))
	require.True(t, secrets.IsSealed(fields["value"]), args)
	opened, err := secrets.Open(key, fields["value"])
	require.NoError(t, err)
	require.Equal(t, secret, opened)

	outJSON, _ := json.Marshal(out)
	evJSON, _ := json.Marshal(sink.events)
	for name, enc := range secretstest.Encodings(secret) {
		require.NotContains(t, string(outJSON), enc, "the output holds the value (%s)", name)
		require.NotContains(t, string(evJSON), enc, "an event holds the value (%s)", name)
	}
	var streamed strings.Builder
	batches := 0
	for _, e := range sink.events {
		if e.Type == round.EventModelToken {
			batches++
			streamed.WriteString(e.Detail)
			require.True(t, strings.HasPrefix(e.ID, "agentrun/s/r/model/3/1/token/"), e.ID)
		}
	}
	require.Equal(t, out.Message.Content, streamed.String(), "every content token was streamed")
	require.Greater(t, batches, 1)
	require.Less(t, batches, 7, "tokens are batched, not one event per token")
	last := sink.events[len(sink.events)-1]
	require.Equal(t, round.EventModelReply, last.Type)
	require.Equal(t, "1 tool calls: store_secret", last.Detail)
}

func TestModelCallWithoutModelFailsForGood(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	m := &Model{}
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})
	_, err := env.ExecuteActivity(wire.ActivityModelCall, wire.ModelInput{})
	require.ErrorContains(t, err, "set LLM_BASE_URL")
}
