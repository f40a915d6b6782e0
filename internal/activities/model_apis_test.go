package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

func writeEvents(w http.ResponseWriter, evs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range evs {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &head)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, e)
	}
}

func apiModel(t *testing.T, api string, handler http.HandlerFunc) (*Model, *recordSink, []byte) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", API: api}, llm.EnvModel)
	require.NoError(t, err)
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	sink := &recordSink{}
	blobs := &storeBlobs{m: map[string]string{"toolround:blob:9": "the whole result"}}
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "read_files", SideEffect: tools.ReadOnly,
		Handler: func(context.Context, tools.Request) (tools.Result, error) { return tools.Result{}, nil }})
	return &Model{LLM: client, Registry: reg, Events: sink, Blobs: blobs, FlushBytes: 1, SecretKey: func() ([]byte, error) { return key, nil }}, sink, key
}

func callModel(t *testing.T, m *Model, in wire.ModelInput) (wire.ModelOutput, error) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})
	val, err := env.ExecuteActivity(wire.ActivityModelCall, in)
	if err != nil {
		return wire.ModelOutput{}, err
	}
	var out wire.ModelOutput
	require.NoError(t, val.Get(&out))
	return out, nil
}

// TestModelCallAnthropic: the conversation goes to /messages in the
// Messages API's shape (the earlier turn as given, the tool messages as
// one user message of tool_result blocks, a stored content read back); the
// answer's thinking block keeps its signature, its store_secret value is
// sealed in the turn and in its calls, and only text reaches the events.
func TestModelCallAnthropic(t *testing.T) {
	const secret = "hunter2-very-secret-value"
	var sent map[string]json.RawMessage
	prev := `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig0"},{"type":"tool_use","id":"toolu_1","name":"read_files","input":{"paths":["a"]}}]}`
	args, _ := json.Marshal(fmt.Sprintf(`{"name":"api","value":"%s"}`, secret))
	m, sink, key := apiModel(t, llm.APIAnthropic, func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/messages", r.URL.Path)
		require.NoError(t, json.NewDecoder(r.Body).Decode(&sent))
		writeEvents(w,
			`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"secret plans"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig1"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Storing."}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"store_secret","input":{}}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":`+string(args)+`}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":50}}`,
			`{"type":"message_stop"}`)
	})
	out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 2, Round: 2, Provider: "openai",
		Messages: []round.AgentMessage{
			{Role: "user", Content: "store my key"},
			{Role: "assistant", Format: round.FormatAnthropic, Raw: json.RawMessage(prev)},
			{Role: "tool", ToolCallID: "toolu_1", Tool: "read_files", Content: "[read_files] prev", ContentRef: "toolround:blob:9", IsError: true},
		}})
	require.NoError(t, err)
	var system string
	require.NoError(t, json.Unmarshal(sent["system"], &system))
	require.True(t, strings.HasPrefix(system, SystemPrompt))
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(sent["messages"], &msgs))
	require.Len(t, msgs, 3)
	require.JSONEq(t, `{"role":"user","content":"store my key"}`, string(msgs[0]))
	require.JSONEq(t, prev, string(msgs[1]), "the earlier turn goes back unchanged")
	require.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"[read_files] the whole result","is_error":true}]}`, string(msgs[2]))
	require.Contains(t, string(sent["tools"]), `"input_schema"`)

	require.Equal(t, "tool_use", out.Stop)
	require.Equal(t, "tool_use", out.FinishReason)
	require.EqualValues(t, 150, out.Tokens)
	require.Equal(t, round.FormatAnthropic, out.Message.Format)
	require.Equal(t, "Storing.", out.Message.Content)
	require.Contains(t, string(out.Message.Raw), `"signature":"sig1"`)
	require.Len(t, out.Message.ToolCalls, 1)
	require.Equal(t, "toolu_2", out.Message.ToolCalls[0].ID)
	var fields map[string]string
	require.NoError(t, json.Unmarshal([]byte(out.Message.ToolCalls[0].Function.Arguments), &fields))
	opened, err := secrets.Open(key, fields["value"])
	require.NoError(t, err)
	require.Equal(t, secret, opened)
	outJSON, _ := json.Marshal(out)
	evJSON, _ := json.Marshal(sink.events)
	for name, enc := range secretstest.Encodings(secret) {
		require.NotContains(t, string(outJSON), enc, "the output holds the value (%s)", name)
		require.NotContains(t, string(evJSON), enc, "an event holds the value (%s)", name)
	}
	require.NotContains(t, string(evJSON), "secret plans", "thinking is not streamed")
	require.Contains(t, string(evJSON), "Storing.")
}

// TestModelCallResponses: the conversation goes to /responses as items
// (the earlier output items as given, function_call_output items), and
// the answer's reasoning item comes back in the turn.
func TestModelCallResponses(t *testing.T) {
	var sent map[string]json.RawMessage
	prev := `[{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"enc0"},{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"read_files","arguments":"{}"}]`
	reasoning := `{"id":"rs_2","type":"reasoning","summary":[],"encrypted_content":"enc1"}`
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}`
	m, sink, _ := apiModel(t, llm.APIResponses, func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/responses", r.URL.Path)
		require.NoError(t, json.NewDecoder(r.Body).Decode(&sent))
		writeEvents(w,
			`{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","status":"in_progress","output":[]}}`,
			`{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":`+reasoning+`}`,
			`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Done."}`,
			`{"type":"response.output_item.done","sequence_number":3,"output_index":1,"item":`+msg+`}`,
			`{"type":"response.completed","sequence_number":4,"response":{"id":"resp_2","status":"completed","output":[`+reasoning+`,`+msg+`],"usage":{"input_tokens":40,"output_tokens":2,"total_tokens":42}}}`)
	})
	out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 2, Round: 2, Provider: "openai",
		Messages: []round.AgentMessage{
			{Role: "user", Content: "do it"},
			{Role: "assistant", Format: round.FormatResponses, Raw: json.RawMessage(prev)},
			{Role: "tool", ToolCallID: "call_1", Content: "[read_files] ok"},
		}})
	require.NoError(t, err)
	require.JSONEq(t, `false`, string(sent["store"]))
	var input []json.RawMessage
	require.NoError(t, json.Unmarshal(sent["input"], &input))
	require.Len(t, input, 4)
	require.JSONEq(t, `{"role":"user","content":"do it"}`, string(input[0]))
	require.Contains(t, string(input[1]), `"encrypted_content":"enc0"`)
	require.JSONEq(t, `{"type":"function_call_output","call_id":"call_1","output":"[read_files] ok"}`, string(input[3]))
	require.Contains(t, string(sent["tools"]), `"strict":false`)
	require.Equal(t, "answer", out.Stop)
	require.Equal(t, "Done.", out.Message.Content)
	require.Empty(t, out.Message.ToolCalls)
	require.JSONEq(t, `[`+reasoning+`,`+msg+`]`, string(out.Message.Raw))
	require.EqualValues(t, 42, out.Tokens)
	evJSON, _ := json.Marshal(sink.events)
	require.Contains(t, string(evJSON), "Done.")
}

// TestModelCallBusyRetriesAfterRetryAfter: a 429 with retry-after is an
// error whose next retry waits that long, capped at two minutes.
func TestModelCallBusyRetriesAfterRetryAfter(t *testing.T) {
	for _, c := range []struct {
		api, after string
		want       time.Duration
	}{{llm.APIAnthropic, "3", 3 * time.Second}, {llm.APIResponses, "600", MaxRetryAfter}, {llm.APIChat, "5", 5 * time.Second}} {
		m, _, _ := apiModel(t, c.api, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", c.after)
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"rate limited"}}`)
		})
		_, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", Call: 1, Messages: []round.AgentMessage{{Role: "user", Content: "hi"}}})
		var ae *temporal.ApplicationError
		require.True(t, errors.As(err, &ae), "%s: %v", c.api, err)
		require.Equal(t, ErrTypeModelBusy, ae.Type())
		require.False(t, ae.NonRetryable())
		require.Equal(t, c.want, ae.NextRetryDelay(), c.api)
	}
	m, _, _ := apiModel(t, llm.APIAnthropic, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	_, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", Call: 1, Messages: []round.AgentMessage{{Role: "user", Content: "hi"}}})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, ErrTypeModelRejected, ae.Type())
	require.Contains(t, err.Error(), "invalid x-api-key")
}

// TestModelCallMixedAPIs: a conversation of another API's turns fails for
// good with a message that names both.
func TestModelCallMixedAPIs(t *testing.T) {
	m, _, _ := apiModel(t, llm.APIResponses, func(w http.ResponseWriter, r *http.Request) { t.Error("no request expected") })
	_, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", Call: 1, Messages: []round.AgentMessage{
		{Role: "user", Content: "hi"}, {Role: "assistant", Format: round.FormatAnthropic, Raw: json.RawMessage(`{"role":"assistant","content":[]}`)}}})
	require.ErrorContains(t, err, "LLM_API=responses")
}

// A thinking block or reasoning item that holds the turn's store_secret
// value is sealed in the turn that enters history (F2), and opened only in
// the request that sends the turn back to the model.
func TestModelCallSealsAThoughtHoldingAValue(t *testing.T) {
	const secret = "hunter2-thought-value"
	args, _ := json.Marshal(fmt.Sprintf(`{"name":"api","value":"%s"}`, secret))
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		t.Run(api, func(t *testing.T) {
			var sent []map[string]json.RawMessage
			m, sink, _ := apiModel(t, api, func(w http.ResponseWriter, r *http.Request) {
				var body map[string]json.RawMessage
				require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
				sent = append(sent, body)
				if api == llm.APIAnthropic {
					writeEvents(w,
						`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
						`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
						`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the key is `+secret+`"}}`,
						`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig1"}}`,
						`{"type":"content_block_stop","index":0}`,
						`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"store_secret","input":{}}}`,
						`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":`+string(args)+`}}`,
						`{"type":"content_block_stop","index":1}`,
						`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`,
						`{"type":"message_stop"}`)
					return
				}
				reasoning := `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"the key is ` + secret + `"}],"encrypted_content":"enc1"}`
				call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"store_secret","arguments":` + string(args) + `,"status":"completed"}`
				writeEvents(w,
					`{"type":"response.output_item.done","output_index":0,"item":`+reasoning+`}`,
					`{"type":"response.output_item.done","output_index":1,"item":`+call+`}`,
					`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+reasoning+`,`+call+`],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`)
			})
			out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 1, Round: 1, Provider: "openai",
				Messages: []round.AgentMessage{{Role: "user", Content: "store my key"}}})
			require.NoError(t, err)
			require.Len(t, out.Message.ToolCalls, 1)
			outJSON, _ := json.Marshal(out)
			evJSON, _ := json.Marshal(sink.events)
			for name, enc := range secretstest.Encodings(secret) {
				require.NotContains(t, string(outJSON), enc, "the output holds the value (%s)", name)
				require.NotContains(t, string(evJSON), enc, "an event holds the value (%s)", name)
			}
			require.Contains(t, string(out.Message.Raw), round.ThoughtWithheld)

			_, err = callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 2, Round: 2, Provider: "openai",
				Messages: []round.AgentMessage{{Role: "user", Content: "store my key"}, out.Message,
					{Role: "tool", ToolCallID: out.Message.ToolCalls[0].ID, Tool: "store_secret", Content: "stored"}}})
			require.NoError(t, err)
			require.Len(t, sent, 2)
			field := "messages"
			if api == llm.APIResponses {
				field = "input"
			}
			back := string(sent[1][field])
			require.Contains(t, back, "the key is "+secret, "the model gets its thought back as it wrote it")
			require.NotContains(t, back, round.ThoughtWithheld)
			if api == llm.APIAnthropic {
				require.Contains(t, back, `"signature":"sig1"`)
			} else {
				require.Contains(t, back, `"encrypted_content":"enc1"`)
			}
		})
	}
}

// sessionSecrets is a session's secret store for the model tests.
type sessionSecrets map[string]map[string]string

func (s sessionSecrets) Names(_ context.Context, session string) ([]string, error) {
	var out []string
	for n := range s[session] {
		out = append(out, n)
	}
	return out, nil
}

func (s sessionSecrets) Get(_ context.Context, session, name string) (string, error) {
	return s[session][name], nil
}

// TestModelCallSealsAThoughtHoldingAnEarlierValue: a thought that holds a
// value an earlier turn of the session stored is sealed though the turn
// stores nothing, in a turn with calls and in a final answer (F2); the
// next request opens it.
func TestModelCallSealsAThoughtHoldingAnEarlierValue(t *testing.T) {
	const secret = "earlier-turn-value-0815"
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		for _, withCall := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/call=%v", api, withCall), func(t *testing.T) {
				var sent []map[string]json.RawMessage
				m, sink, _ := apiModel(t, api, func(w http.ResponseWriter, r *http.Request) {
					var body map[string]json.RawMessage
					require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
					sent = append(sent, body)
					if api == llm.APIAnthropic {
						ev := []string{
							`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
							`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
							`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"it was ` + secret + `"}}`,
							`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig1"}}`,
							`{"type":"content_block_stop","index":0}`}
						stop := "end_turn"
						if withCall {
							stop = "tool_use"
							ev = append(ev, `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"read_files","input":{}}}`,
								`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"paths\":[\"a\"]}"}}`,
								`{"type":"content_block_stop","index":1}`)
						} else {
							ev = append(ev, `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
								`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"done"}}`,
								`{"type":"content_block_stop","index":1}`)
						}
						writeEvents(w, append(ev, `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":5}}`, `{"type":"message_stop"}`)...)
						return
					}
					reasoning := `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"it was ` + secret + `"}],"encrypted_content":"enc1"}`
					second := `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}`
					if withCall {
						second = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_files","arguments":"{\"paths\":[\"a\"]}","status":"completed"}`
					}
					writeEvents(w,
						`{"type":"response.output_item.done","output_index":0,"item":`+reasoning+`}`,
						`{"type":"response.output_item.done","output_index":1,"item":`+second+`}`,
						`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+reasoning+`,`+second+`],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`)
				})
				m.Secrets = sessionSecrets{"s": {"api": secret}}
				out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 2, Round: 2, Provider: "openai",
					Messages: []round.AgentMessage{{Role: "user", Content: "go on"}}})
				require.NoError(t, err)
				outJSON, _ := json.Marshal(out)
				evJSON, _ := json.Marshal(sink.events)
				for name, enc := range secretstest.Encodings(secret) {
					require.NotContains(t, string(outJSON), enc, "the output holds the value (%s)", name)
					require.NotContains(t, string(evJSON), enc, "an event holds the value (%s)", name)
				}
				require.Contains(t, string(out.Message.Raw), round.ThoughtWithheld)
				if !withCall {
					return
				}
				_, err = callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 3, Round: 3, Provider: "openai",
					Messages: []round.AgentMessage{{Role: "user", Content: "go on"}, out.Message,
						{Role: "tool", ToolCallID: out.Message.ToolCalls[0].ID, Tool: "read_files", Content: "a: x"}}})
				require.NoError(t, err)
				field := "messages"
				if api == llm.APIResponses {
					field = "input"
				}
				require.Contains(t, string(sent[1][field]), "it was "+secret, "the model gets its thought back as it wrote it")
			})
		}
	}
}

// TestModelCallStoresALargeTurn: a turn whose raw form is above MaxRaw
// goes to the blob store whole; history keeps its reference and the turn's
// calls (what its round reads), and the next request sends the whole turn
// back, thinking and signature or encrypted reasoning and all. At the
// threshold, or without a blob store, the turn stays in history as it is.
func TestModelCallStoresALargeTurn(t *testing.T) {
	long := strings.Repeat("think ", 400) // 2400 bytes
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		t.Run(api, func(t *testing.T) {
			var sent []map[string]json.RawMessage
			m, _, _ := apiModel(t, api, func(w http.ResponseWriter, r *http.Request) {
				var body map[string]json.RawMessage
				require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
				sent = append(sent, body)
				if api == llm.APIAnthropic {
					writeEvents(w,
						`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
						`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
						`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+long+`"}}`,
						`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-long"}}`,
						`{"type":"content_block_stop","index":0}`,
						`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"read_files","input":{}}}`,
						`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"paths\":[\"a\"]}"}}`,
						`{"type":"content_block_stop","index":1}`,
						`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`,
						`{"type":"message_stop"}`)
					return
				}
				reasoning := `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-` + long + `"}`
				call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_files","arguments":"{\"paths\":[\"a\"]}","status":"completed"}`
				writeEvents(w,
					`{"type":"response.output_item.done","output_index":0,"item":`+reasoning+`}`,
					`{"type":"response.output_item.done","output_index":1,"item":`+call+`}`,
					`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+reasoning+`,`+call+`],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`)
			})
			in := wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 1, Round: 1, Provider: "openai",
				Messages: []round.AgentMessage{{Role: "user", Content: "read a"}}}

			m.MaxRaw = 1 << 20
			whole, err := callModel(t, m, in)
			require.NoError(t, err)
			require.Empty(t, whole.Message.RawRef, "a turn within MaxRaw stays in history")
			require.Contains(t, string(whole.Message.Raw), long)

			m.MaxRaw = len(whole.Message.Raw)
			out, err := callModel(t, m, in)
			require.NoError(t, err)
			require.Empty(t, out.Message.RawRef, "a turn at MaxRaw stays in history")

			m.MaxRaw = 1000
			out, err = callModel(t, m, in)
			require.NoError(t, err)
			require.NotEmpty(t, out.Message.RawRef)
			require.NotContains(t, string(out.Message.Raw), long, "history keeps a short turn")
			require.Less(t, len(out.Message.Raw), 1000)
			stored, err := m.Blobs.Get(context.Background(), out.Message.RawRef)
			require.NoError(t, err)
			require.JSONEq(t, string(whole.Message.Raw), stored, "the blob store holds the whole turn")

			// The short turn is what the turn's round reads: the same calls.
			f := apiFormat(api)
			ri := round.Input{Format: f}
			if f == round.FormatAnthropic {
				ri.Turn = out.Message.Raw
			} else {
				ri.Output = out.Message.Raw
			}
			calls, err := ri.TurnCalls()
			require.NoError(t, err)
			require.Len(t, calls, 1)
			require.Equal(t, out.Message.ToolCalls[0].ID, calls[0].ID)
			require.JSONEq(t, `{"paths":["a"]}`, string(calls[0].Function.Arguments))

			_, err = callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", WorkflowID: "agentrun/s/r", Call: 2, Round: 2, Provider: "openai",
				Messages: []round.AgentMessage{{Role: "user", Content: "read a"}, out.Message,
					{Role: "tool", ToolCallID: out.Message.ToolCalls[0].ID, Tool: "read_files", Content: "a: x"}}})
			require.NoError(t, err)
			field := "messages"
			if api == llm.APIResponses {
				field = "input"
			}
			back := string(sent[len(sent)-1][field])
			require.Contains(t, back, long, "the model gets the whole turn back")
			if api == llm.APIAnthropic {
				require.Contains(t, back, `"signature":"sig-long"`)
			}

			m.Blobs = nil
			out, err = callModel(t, m, in)
			require.NoError(t, err)
			require.Empty(t, out.Message.RawRef, "without a blob store the turn stays in history")
			require.Contains(t, string(out.Message.Raw), long)
		})
	}
}
