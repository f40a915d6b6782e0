package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// requireNotInHistory checks every event of each workflow's history, and
// the payloads in it, for the value in any encoding.
func requireNotInHistory(t *testing.T, secret string, wids ...string) {
	t.Helper()
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	forms := secretstest.Encodings(secret)
	check := func(where, text string) {
		t.Helper()
		for name, enc := range forms {
			require.NotContains(t, text, enc, "%s holds the secret (%s)", where, name)
		}
	}
	data := regexp.MustCompile(`"data":"([A-Za-z0-9+/=]*)"`)
	for _, wid := range wids {
		it := tc.GetWorkflowHistory(context.Background(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			events++
			b, err := protojson.Marshal(ev)
			require.NoError(t, err)
			check(wid+" history", string(b))
			for _, m := range data.FindAllStringSubmatch(string(b), -1) {
				plain, err := base64.StdEncoding.DecodeString(m[1])
				require.NoError(t, err)
				check(wid+" history payload", string(plain))
			}
		}
		require.Greater(t, events, 3, wid)
	}
}

// TestThoughtsHoldingASecretStaySealed (F2): a round's thinking block and
// an agent run's thinking block that hold a store_secret value, of their
// own turn or stored by an earlier one, are in no history event and no
// published event; the caller's result and the model's next request get
// the block back with its signature.
func TestThoughtsHoldingASecretStaySealed(t *testing.T) {
	const secret = "sk-thought-5b1e9d44c0"
	t.Run("round", func(t *testing.T) {
		e := newEnv(t)
		e.startWorker()
		in := round.Input{SessionID: e.session, RunID: "run-1", Round: 1, Provider: "claude-code",
			State: &round.RunState{Fetched: []string{"store_secret"}}, Format: round.FormatAnthropic,
			Turn: json.RawMessage(`{"role":"assistant","content":[
				{"type":"thinking","thinking":"The key is ` + secret + `; store it.","signature":"sig-round"},
				{"type":"tool_use","id":"toolu_s","name":"store_secret","input":{"name":"api","value":"` + secret + `"}}]}`)}
		res := e.round(in)
		require.Len(t, res.Results, 1)
		require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
		h, err := json.Marshal(res.History)
		require.NoError(t, err)
		require.Contains(t, string(h), `"thinking":"The key is `+secret+`; store it."`, "the caller gets the block to send back")
		require.Contains(t, string(h), `"signature":"sig-round"`)
		requireNotInHistory(t, secret, names.WorkflowID(e.session, "run-1", 1))

		// A later turn stores nothing; its thought holds the value stored
		// before, and is sealed too.
		in2 := round.Input{SessionID: e.session, RunID: "run-1", Round: 2, Provider: "claude-code", State: res.State, Format: round.FormatAnthropic,
			Turn: json.RawMessage(`{"role":"assistant","content":[
				{"type":"thinking","thinking":"Stored ` + secret + ` already; now the sum.","signature":"sig-round2"},
				{"type":"tool_use","id":"toolu_c","name":"run_tool","input":{"name":"calculate","args":{"expression":"6*7"}}}]}`)}
		res2 := e.round(in2)
		require.Len(t, res2.Results, 1)
		h, err = json.Marshal(res2.History)
		require.NoError(t, err)
		require.Contains(t, string(h), `"thinking":"Stored `+secret+` already; now the sum."`, "the caller gets the block to send back")
		require.Contains(t, string(h), `"signature":"sig-round2"`)
		requireNotInHistory(t, secret, names.WorkflowID(e.session, "run-1", 2))
	})
	t.Run("agent run", func(t *testing.T) {
		// Step 1 loads store_secret, step 2 stores the value (its thought
		// holds it), step 3 answers (its thought holds the value step 2
		// stored).
		m := newModelServer(t, func(r scripted.Request) (scripted.Turn, error) {
			switch step(r) {
			case 1:
				return scripted.Turn{Calls: []scripted.Call{modelFindTools("toolu_f", "store_secret")}}, nil
			case 2:
				return scripted.Turn{Thinking: "The key is " + secret + "; store it.", Signature: "sig-agent",
					Calls: []scripted.Call{modelRunTool("toolu_s", "store_secret", map[string]any{"name": "api", "value": secret})}}, nil
			default:
				// The answer's thought holds the value the turn before stored.
				return scripted.Turn{Thinking: "Stored " + secret + ".", Signature: "sig-agent2", Text: "stored"}, nil
			}
		}, scripted.Options{})
		e := newAgentEnv(t, m, "LLM_API=anthropic")
		r := e.runAgent("--run", "run-1", "--auto-approve", "--events", "store my key")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "stored\n", r.stdout)
		status := e.starter(context.Background(), "", "agent-status", names.AgentWorkflowID(e.session, "run-1"))
		require.Contains(t, status.stdout, `[store_secret] stored secret api`, "the value was stored in step 2")
		sentBack := turnsSentBack(t, m, 3)
		require.Len(t, sentBack, 1)
		require.Contains(t, sentBack[0], "The key is "+secret, "the model gets its thinking back as it wrote it")
		require.Contains(t, sentBack[0], `"signature":"sig-agent"`)
		for name, enc := range secretstest.Encodings(secret) {
			require.NotContains(t, r.stdout+r.stderr, enc, "the starter's output and events hold the secret (%s)", name)
		}
		require.NotContains(t, status.stdout, secret)
		requireNotInHistory(t, secret, names.AgentWorkflowID(e.session, "run-1"), names.WorkflowID(e.session, "run-1", 1), names.WorkflowID(e.session, "run-1", 2))
	})
}

// turnsSentBack is, for each Messages API request of step s the model
// answered, its message before the last: the model's turn of step s-1 as
// the run sent it back, before the user message of its tool results.
func turnsSentBack(t *testing.T, m *modelServer, s int) []string {
	t.Helper()
	var out []string
	for _, r := range m.requests() {
		if step(r) != s {
			continue
		}
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &req), string(r.Body))
		require.GreaterOrEqual(t, len(req.Messages), 2, string(r.Body))
		out = append(out, string(req.Messages[len(req.Messages)-2]))
	}
	return out
}
