package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
)

// TestModelCallKeepsWithinTheContextBudget (B3): a scripted model over
// twelve rounds of 3000-byte results; every request stays under
// LLM_CONTEXT_TOKENS (bytes / 4), the oldest results are the ones
// shortened, user messages and the last two rounds never are, and a
// shortened result read back with read_result is byte-identical.
func TestModelCallKeepsWithinTheContextBudget(t *testing.T) {
	const budget = 4000
	var mu sync.Mutex
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sizes = append(sizes, len(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m"}, llm.EnvModel)
	require.NoError(t, err)
	blobs := &storeBlobs{m: map[string]string{}}
	m := &Model{LLM: client, Blobs: blobs, ContextTokens: budget}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})

	conv := []round.AgentMessage{{Role: "user", Content: "read every file"}}
	results := map[int]string{} // message index -> the result as the model first saw it
	var refs []string
	for n := 1; n <= 12; n++ {
		id := fmt.Sprintf("c%d", n)
		conv = append(conv, round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: id, Function: round.FunctionCall{Name: "read_files", Arguments: "{}"}}}})
		results[len(conv)] = fmt.Sprintf("[read_files] file %d: %s", n, strings.Repeat(string(rune('a'+n)), 3000))
		conv = append(conv, round.AgentMessage{Role: "tool", ToolCallID: id, Tool: "read_files", Content: results[len(conv)]})
		val, err := env.ExecuteActivity(wire.ActivityModelCall, wire.ModelInput{SessionID: "s", RunID: "r", Call: n, Provider: "openai", Messages: conv, Budget: true})
		require.NoError(t, err)
		var out wire.ModelOutput
		require.NoError(t, val.Get(&out))
		require.False(t, out.ContextExceeded)
		for _, b := range out.Budgeted {
			require.Equal(t, "tool", conv[b.Msg].Role)
			require.Less(t, b.Msg, len(conv)-4, "the last two rounds are never shortened")
			conv[b.Msg].Content, conv[b.Msg].ContentRef, conv[b.Msg].Budgeted = b.Content, b.Ref, true
			refs = append(refs, b.Ref)
		}
	}
	require.Len(t, sizes, 12)
	for i, s := range sizes {
		require.LessOrEqual(t, s/4, budget, "request %d is %d bytes", i+1, s)
	}
	require.Greater(t, sizes[11], 3*budget, "the budget is used, not emptied")
	require.NotEmpty(t, refs)
	require.Equal(t, "read every file", conv[0].Content)
	require.True(t, conv[2].Budgeted, "the oldest result went first")
	require.False(t, conv[len(conv)-1].Budgeted)
	require.False(t, conv[len(conv)-3].Budgeted)

	defs, err := agent.Definitions(agent.Config{SecretKey: make([]byte, 32), Blobs: blobs, ContextTokens: budget})
	require.NoError(t, err)
	var read tools.Definition
	for _, d := range defs {
		if d.Name == tools.ReadResult {
			read = d
		}
	}
	require.NotNil(t, read.Handler)
	for i, msg := range conv {
		if !msg.Budgeted {
			continue
		}
		require.Contains(t, msg.Content, msg.ContentRef, "the preview names its reference")
		args, _ := json.Marshal(map[string]any{"ref": msg.ContentRef})
		res, err := read.Handler(context.Background(), tools.Request{Tool: tools.ReadResult, Args: args, ResultRefs: refs})
		require.NoError(t, err)
		require.Equal(t, results[i], res.Content, "message %d read back whole", i)
	}
}

// TestModelCallContextExceeded (B3): when the user messages and the last
// two rounds alone pass the budget, the model is not asked.
func TestModelCallContextExceeded(t *testing.T) {
	asked := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked = true }))
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m"}, llm.EnvModel)
	require.NoError(t, err)
	m := &Model{LLM: client, Blobs: &storeBlobs{m: map[string]string{}}, ContextTokens: 1000}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})
	conv := []round.AgentMessage{{Role: "user", Content: strings.Repeat("x", 5000)}}
	val, err := env.ExecuteActivity(wire.ActivityModelCall, wire.ModelInput{SessionID: "s", RunID: "r", Call: 1, Provider: "openai", Messages: conv, Budget: true})
	require.NoError(t, err)
	var out wire.ModelOutput
	require.NoError(t, val.Get(&out))
	require.True(t, out.ContextExceeded)
	require.False(t, asked, "the model was not asked")
}

// turnReply writes a text answer of api whose usage reports input input
// tokens.
func turnReply(w http.ResponseWriter, api string, input int) {
	if api == llm.APIAnthropic {
		writeEvents(w,
			fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, input),
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`,
			`{"type":"message_stop"}`)
		return
	}
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}`
	writeEvents(w,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"ok"}`,
		`{"type":"response.output_item.done","output_index":0,"item":`+msg+`}`,
		fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[%s],"usage":{"input_tokens":%d,"output_tokens":1,"total_tokens":%d}}}`, msg, input, input+1))
}

// turnWithCall is an assistant turn of api that calls read_files as id.
func turnWithCall(api, id string) round.AgentMessage {
	m := round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: id, Type: "function", Function: round.FunctionCall{Name: "read_files", Arguments: "{}"}}}}
	if api == llm.APIAnthropic {
		m.Format, m.Raw = round.FormatAnthropic, json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"read_files","input":{}}]}`, id))
	} else {
		m.Format, m.Raw = round.FormatResponses, json.RawMessage(fmt.Sprintf(`[{"type":"function_call","id":"fc_%s","call_id":%q,"name":"read_files","arguments":"{}","status":"completed"}]`, id, id))
	}
	return m
}

// TestModelCallBudgetOnTheTurnAPIs (B3) on the Messages and Responses
// APIs: a scripted model that reports as input tokens its request's bytes
// / 4, over twelve rounds of 3000-byte results, each call estimated from
// the last one's reported tokens as the run passes them on; every request
// stays under the budget, the oldest results are shortened, the last two
// rounds never are, and each one read back with read_result is
// byte-identical.
func TestModelCallBudgetOnTheTurnAPIs(t *testing.T) {
	const budget = 4000
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		t.Run(api, func(t *testing.T) {
			var mu sync.Mutex
			var sizes []int
			m, _, _ := apiModel(t, api, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				sizes = append(sizes, len(b))
				mu.Unlock()
				turnReply(w, api, len(b)/4)
			})
			blobs := &storeBlobs{m: map[string]string{}}
			m.ContextTokens, m.Blobs = budget, blobs
			conv := []round.AgentMessage{{Role: "user", Content: "read every file"}}
			results := map[int]string{}
			var refs []string
			var last *round.RequestSize
			for n := 1; n <= 12; n++ {
				id := fmt.Sprintf("c%d", n)
				conv = append(conv, turnWithCall(api, id))
				results[len(conv)] = fmt.Sprintf("[read_files] file %d: %s", n, strings.Repeat(string(rune('a'+n)), 3000))
				conv = append(conv, round.AgentMessage{Role: "tool", ToolCallID: id, Tool: "read_files", Content: results[len(conv)]})
				out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", Call: n, Provider: "openai", Messages: conv, Budget: true, Last: last})
				require.NoError(t, err)
				require.False(t, out.ContextExceeded)
				require.NotNil(t, out.Request, "call %d reports its request's size", n)
				require.Positive(t, out.Request.Bytes)
				require.EqualValues(t, sizes[n-1]/4, out.Request.InputTokens, "call %d: the reported input tokens", n)
				last = out.Request
				for _, b := range out.Budgeted {
					require.Equal(t, "tool", conv[b.Msg].Role)
					require.Less(t, b.Msg, len(conv)-4, "the last two rounds are never shortened")
					conv[b.Msg].Content, conv[b.Msg].ContentRef, conv[b.Msg].Budgeted = b.Content, b.Ref, true
					refs = append(refs, b.Ref)
				}
			}
			require.Len(t, sizes, 12)
			for i, s := range sizes {
				// The estimate rounds each of its two terms down: a token.
				require.LessOrEqual(t, s/4, budget+1, "request %d is %d bytes", i+1, s)
			}
			require.Greater(t, sizes[11], 3*budget, "the budget is used, not emptied")
			require.NotEmpty(t, refs)
			require.True(t, conv[2].Budgeted, "the oldest result went first")
			require.False(t, conv[len(conv)-1].Budgeted)
			require.False(t, conv[len(conv)-3].Budgeted)
			read := readResultTool(t, blobs, budget)
			for i, msg := range conv {
				if !msg.Budgeted {
					continue
				}
				args, _ := json.Marshal(map[string]any{"ref": msg.ContentRef})
				res, err := read.Handler(context.Background(), tools.Request{Tool: tools.ReadResult, Args: args, ResultRefs: refs})
				require.NoError(t, err)
				require.Equal(t, results[i], res.Content, "message %d read back whole", i)
			}
		})
	}
}

func readResultTool(t *testing.T, blobs BlobStore, budget int) tools.Definition {
	t.Helper()
	defs, err := agent.Definitions(agent.Config{SecretKey: make([]byte, 32), Blobs: blobs, ContextTokens: budget})
	require.NoError(t, err)
	for _, d := range defs {
		if d.Name == tools.ReadResult {
			require.NotNil(t, d.Handler)
			return d
		}
	}
	t.Fatal("no read_result tool")
	return tools.Definition{}
}

// TestModelCallContextExceededOnTheTurnAPIs (B3): on the Messages and
// Responses APIs too, a conversation whose user message alone passes the
// budget is not sent.
func TestModelCallContextExceededOnTheTurnAPIs(t *testing.T) {
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		t.Run(api, func(t *testing.T) {
			asked := false
			m, _, _ := apiModel(t, api, func(w http.ResponseWriter, r *http.Request) { asked = true })
			m.ContextTokens = 1000
			conv := []round.AgentMessage{{Role: "user", Content: strings.Repeat("x", 5000)}}
			out, err := callModel(t, m, wire.ModelInput{SessionID: "s", RunID: "r", Call: 1, Provider: "openai", Messages: conv, Budget: true})
			require.NoError(t, err)
			require.True(t, out.ContextExceeded)
			require.Empty(t, out.Budgeted)
			require.False(t, asked, "the model was not asked")
		})
	}
}

// TestModelCallEstimatesFromTheReportedTokens (B3): a request is estimated
// as the last reported input tokens plus the bytes it grew by / 4, so a
// model that counts more tokens than bytes / 4 gets its oldest results
// shortened sooner; with no usage reported, bytes / 4 decides.
func TestModelCallEstimatesFromTheReportedTokens(t *testing.T) {
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":777,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m"}, llm.EnvModel)
	require.NoError(t, err)
	m := &Model{LLM: client, Blobs: &storeBlobs{m: map[string]string{}}, ContextTokens: 2000}
	conv := []round.AgentMessage{{Role: "user", Content: "read"}}
	for n := 1; n <= 3; n++ {
		id := fmt.Sprintf("c%d", n)
		conv = append(conv,
			round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: id, Function: round.FunctionCall{Name: "read_files", Arguments: "{}"}}}},
			round.AgentMessage{Role: "tool", ToolCallID: id, Content: strings.Repeat("r", 1500)})
	}
	in := wire.ModelInput{SessionID: "s", RunID: "r", Call: 2, Provider: "openai", Messages: conv, Budget: true}

	out, err := callModel(t, m, in) // about 1200 tokens by bytes / 4
	require.NoError(t, err)
	require.Empty(t, out.Budgeted, "bytes / 4 is under the budget")
	require.Equal(t, &round.RequestSize{Bytes: out.Request.Bytes, InputTokens: 777}, out.Request)

	// The previous request, a result smaller, was counted 1800 tokens.
	in.Last = &round.RequestSize{Bytes: out.Request.Bytes - 1500, InputTokens: 1800}
	out, err = callModel(t, m, in)
	require.NoError(t, err)
	require.Len(t, out.Budgeted, 1, "1800 + 1500/4 passes 2000: the oldest result is shortened")
	require.Equal(t, 2, out.Budgeted[0].Msg)
	require.Equal(t, 2, requests)
}

// B3: the last two rounds are never shortened: the protected part starts
// at the second to last assistant turn with tool calls, so the results of
// the round before the last one stay whole too.
func TestTheLastTwoRoundsAreProtected(t *testing.T) {
	tc := []round.ToolCall{{ID: "c", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: "{}"}}}
	turn := func() []round.AgentMessage {
		return []round.AgentMessage{{Role: "assistant", ToolCalls: tc}, {Role: "tool", Content: "result"}}
	}
	conv := []round.AgentMessage{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}
	require.Equal(t, 0, protectedFrom(conv), "no round yet")
	conv = append(conv, turn()...) // round 1 at 2
	require.Equal(t, 0, protectedFrom(conv), "one round: all of it is protected")
	conv = append(conv, turn()...) // round 2 at 4
	require.Equal(t, 2, protectedFrom(conv))
	conv = append(conv, round.AgentMessage{Role: "user", Content: "more"})
	conv = append(conv, turn()...) // round 3 at 7
	require.Equal(t, 4, protectedFrom(conv), "the second to last round starts the protected part")
	conv = append(conv, round.AgentMessage{Role: "assistant", Content: "a final answer"})
	require.Equal(t, 4, protectedFrom(conv), "a turn without tool calls is no round")
}
