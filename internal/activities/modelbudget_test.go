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
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: round.ActivityModelCall})

	conv := []round.AgentMessage{{Role: "user", Content: "read every file"}}
	results := map[int]string{} // message index -> the result as the model first saw it
	var refs []string
	for n := 1; n <= 12; n++ {
		id := fmt.Sprintf("c%d", n)
		conv = append(conv, round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: id, Function: round.FunctionCall{Name: "read_files", Arguments: "{}"}}}})
		results[len(conv)] = fmt.Sprintf("[read_files] file %d: %s", n, strings.Repeat(string(rune('a'+n)), 3000))
		conv = append(conv, round.AgentMessage{Role: "tool", ToolCallID: id, Tool: "read_files", Content: results[len(conv)]})
		val, err := env.ExecuteActivity(round.ActivityModelCall, round.ModelInput{SessionID: "s", RunID: "r", Call: n, Provider: "openai", Messages: conv, Budget: true})
		require.NoError(t, err)
		var out round.ModelOutput
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
	env.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: round.ActivityModelCall})
	conv := []round.AgentMessage{{Role: "user", Content: strings.Repeat("x", 5000)}}
	val, err := env.ExecuteActivity(round.ActivityModelCall, round.ModelInput{SessionID: "s", RunID: "r", Call: 1, Provider: "openai", Messages: conv, Budget: true})
	require.NoError(t, err)
	var out round.ModelOutput
	require.NoError(t, val.Get(&out))
	require.True(t, out.ContextExceeded)
	require.False(t, asked, "the model was not asked")
}
