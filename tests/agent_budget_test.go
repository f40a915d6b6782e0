package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// budgetTokens is the LLM_CONTEXT_TOKENS of TestAgentRunKeepsWithinTheContextBudget:
// the system message and the tools array (about 1500 tokens) and two
// rounds of a file (about 1800 tokens each) fit well, six such rounds do not.
const budgetTokens = 10000

// budgetFiles are the files the budget's scripted model reads, one a
// round; each is about 1500 tokens.
const budgetFiles = 6

var previewRef = regexp.MustCompile(`read_result \{"ref": "(toolround:blob:[0-9a-f]+)"\}`)

// budgetModel is a chat-completions server that plays an agent which
// reads a large file a round, then reads back a result the budget
// replaced, then asks read_result for two references that are not this
// run's, then answers. It checks every request against the budget, and
// reports as prompt_tokens each request's bytes / 4, so the worker's
// estimate goes by the reported tokens.
type budgetModel struct {
	*modelServer
	// foreign is a blob that exists but that no budget of this run replaced.
	foreign string
	// age, when set, is given every preview's reference of the request
	// that reads one back: its TTL is cut to an hour, as if it had lived
	// almost all of it.
	age func(ref string)

	mu       sync.Mutex
	sizes    []int
	problems []string
	first    map[string]string // a tool message's content as it first came
	readBack struct{ ref, callID, got string }
	denied   []string // the two answers to the foreign references
	done     bool
	aged     map[string]bool
}

func (m *budgetModel) fail(format string, args ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

func (m *budgetModel) turn(r scripted.Request) (scripted.Turn, error) {
	body, msgs := r.Body, r.Messages
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sizes = append(m.sizes, len(body))
	if len(body)/4 > budgetTokens {
		m.fail("request %d is %d bytes, %d tokens by bytes / 4: past the budget %d", len(m.sizes), len(body), len(body)/4, budgetTokens)
	}
	tools := 0
	var lastTools []string
	for i, msg := range msgs {
		switch msg.Role {
		case "system":
			if i != 0 || !strings.HasPrefix(msg.Content, "You are an agent") {
				m.fail("request %d: the system message is not whole", len(m.sizes))
			}
		case "user":
			if msg.Content != "read the files" {
				m.fail("request %d: the user message was changed: %q", len(m.sizes), msg.Content)
			}
		case "tool":
			tools++
			if _, ok := m.first[msg.CallID]; !ok {
				m.first[msg.CallID] = msg.Content
			}
		}
	}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
		lastTools = append([]string{msgs[i].Content}, lastTools...)
	}
	var calls []scripted.Call
	content := ""
	switch {
	case tools == 0:
		calls = []scripted.Call{modelFindTools("call_find", "read_files")}
	case tools <= budgetFiles:
		calls = []scripted.Call{modelRunTool(fmt.Sprintf("call_read%d", tools), "read_files",
			map[string]any{"paths": []string{fmt.Sprintf("big%d.txt", tools)}})}
	case tools == budgetFiles+1:
		// The oldest file's result: the budget replaced it by now.
		for _, msg := range msgs {
			if sub := previewRef.FindStringSubmatch(msg.Content); sub != nil && m.age != nil && !m.aged[sub[1]] {
				m.aged[sub[1]] = true
				m.age(sub[1])
			}
			if msg.CallID == "call_read1" {
				if sub := previewRef.FindStringSubmatch(msg.Content); sub != nil {
					m.readBack.ref, m.readBack.callID = sub[1], msg.CallID
				}
			}
		}
		if m.readBack.ref == "" {
			m.fail("the oldest file's result was not replaced by a preview naming its reference")
			content = "nothing to read back"
			break
		}
		calls = []scripted.Call{modelCall("call_back", "read_result", map[string]any{"ref": m.readBack.ref})}
	case tools == budgetFiles+2:
		m.readBack.got = lastTools[len(lastTools)-1]
		calls = []scripted.Call{
			modelCall("call_foreign", "read_result", map[string]any{"ref": m.foreign}),
			modelCall("call_absent", "read_result", map[string]any{"ref": "toolround:blob:" + strings.Repeat("0", 64)}),
		}
	default:
		m.denied = lastTools
		m.done = true
		content = "Read them all."
	}
	// The usage reports the request's bytes / 4 as its prompt tokens.
	return scripted.Turn{Text: content, Calls: calls, Usage: &scripted.Usage{Input: len(body) / 4, Output: 10}}, nil
}

// TestAgentRunKeepsWithinTheContextBudget (B3), through the real worker
// with a small LLM_CONTEXT_TOKENS: over six rounds of large files every
// request stays under the budget, the system and user messages stay
// whole, the oldest results become previews with references; read_result
// gives one back byte-identical, and answers not_this_run, alike, for a
// blob that exists but is not this run's and for one that does not exist.
func TestAgentRunKeepsWithinTheContextBudget(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	secret := fmt.Sprintf("another run's result %s", t.Name())
	sum := sha256.Sum256([]byte(secret))
	foreign := "toolround:blob:" + hex.EncodeToString(sum[:])
	require.NoError(t, rdb.Set(ctx, foreign, secret, 0).Err())
	t.Cleanup(func() { rdb.Del(context.Background(), foreign) })

	m := &budgetModel{foreign: foreign, first: map[string]string{}, aged: map[string]bool{}}
	m.modelServer = newModelServer(t, m.turn, scripted.Options{})
	e := newEnv(t, append(m.env(), fmt.Sprintf("LLM_CONTEXT_TOKENS=%d", budgetTokens))...)
	writeBudgetFiles(t, e.workdir)
	e.startWorker()
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "read the files")
	m.mu.Lock()
	t.Logf("request sizes: %v", m.sizes)
	m.mu.Unlock()
	require.Equal(t, 0, r.code, "starter agent failed: %s", r.stderr)
	require.Equal(t, "Read them all.\n", r.stdout)

	m.mu.Lock()
	defer m.mu.Unlock()
	require.True(t, m.done)
	require.Empty(t, m.problems)
	require.Len(t, m.sizes, budgetFiles+4, "find_tools, a round a file, read back, foreign, answer")
	maxSize := 0
	for _, s := range m.sizes {
		maxSize = max(maxSize, s)
	}
	require.Greater(t, maxSize/4, budgetTokens/2, "the budget is used, not emptied")

	require.NotEmpty(t, m.readBack.ref)
	require.Equal(t, "[read_result] "+m.first[m.readBack.callID], m.readBack.got, "the replaced result read back is byte-identical")
	require.Contains(t, m.readBack.got, "file 1 line 0:")
	require.Len(t, m.denied, 2)
	require.Contains(t, m.denied[0], "not_this_run")
	require.Equal(t, m.denied[0], m.denied[1], "the same answer whether or not the reference exists")
	require.NotContains(t, m.denied[0], secret)

	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
	budgeted := 0
	for _, msg := range st.Conversation {
		if msg.Budgeted {
			budgeted++
			require.Equal(t, "tool", msg.Role)
			require.Contains(t, msg.Content, msg.ContentRef, "a preview names its reference")
		}
	}
	require.Positive(t, budgeted, "agent-status shows the replaced results")
	require.Equal(t, "call_read1", st.Conversation[4].ToolCallID)
	require.True(t, st.Conversation[4].Budgeted, "the oldest file's result was replaced")
}

// TestAgentRunRefreshesItsReferencesAtContinueAsNew (B3): a run whose
// history bound makes it continue as new every round or two, the
// budget's scripted model ageing the blob of each replaced result to an
// hour's TTL two rounds before the end: at the next continue-as-new every
// one gets the store's whole TTL again, and the result read back is still
// byte-identical.
func TestAgentRunRefreshesItsReferencesAtContinueAsNew(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	m := &budgetModel{foreign: "toolround:blob:" + strings.Repeat("1", 64), first: map[string]string{}, aged: map[string]bool{}}
	m.age = func(ref string) {
		if err := rdb.Expire(ctx, ref, time.Hour).Err(); err != nil {
			m.fail("age %s: %v", ref, err)
		}
	}
	m.modelServer = newModelServer(t, m.turn, scripted.Options{})
	e := newEnv(t, append(m.env(), fmt.Sprintf("LLM_CONTEXT_TOKENS=%d", budgetTokens))...)
	writeBudgetFiles(t, e.workdir)
	e.startWorker()

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	_, st := e.agentWorkflowCompletes(tc, round.AgentInput{SessionID: e.session, RunID: "run-1", Task: "read the files", Provider: "openai", HistoryEvents: 20}, 2*time.Minute)
	require.Greater(t, st.Executions, 2, "the run continued as new")

	m.mu.Lock()
	defer m.mu.Unlock()
	require.Empty(t, m.problems)
	require.NotEmpty(t, m.aged, "the budget replaced results")
	for ref := range m.aged {
		ttl, err := rdb.TTL(ctx, ref).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, 7*24*time.Hour, "%s was refreshed at continue-as-new", ref)
	}
	require.Equal(t, "[read_result] "+m.first[m.readBack.callID], m.readBack.got, "read back across continue-as-new, byte-identical")
}

// writeBudgetFiles writes the files the budget's scripted model reads,
// about 6000 bytes each.
func writeBudgetFiles(t *testing.T, dir string) {
	t.Helper()
	for i := 1; i <= budgetFiles; i++ {
		var b strings.Builder
		for line := 0; b.Len() < 6000; line++ {
			fmt.Fprintf(&b, "file %d line %d: %s\n", i, line, strings.Repeat(string(rune('a'+i)), 40))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("big%d.txt", i)), []byte(b.String()), 0o644))
	}
}

// TestAgentRunContextExceeded (B3): when the system message, the user
// message and the tools array alone pass LLM_CONTEXT_TOKENS, the model is
// never asked: starter agent exits 1 naming context_exceeded, and
// agent-status keeps the conversation.
func TestAgentRunContextExceeded(t *testing.T) {
	m := newModelServer(t, func(scripted.Request) (scripted.Turn, error) {
		return scripted.Turn{}, errors.New("not to be asked")
	}, scripted.Options{})
	e := newAgentEnv(t, m, "LLM_CONTEXT_TOKENS=1000")
	task := "summarize this: " + strings.Repeat("a long task that will not fit ", 200)
	r := e.runAgent("--run", "run-1", task)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "context_exceeded")
	require.Contains(t, r.stderr, "LLM_CONTEXT_TOKENS")
	require.Empty(t, r.stdout)
	require.Empty(t, m.requests(), "the model was asked")
	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentContextExceeded, st.Status)
	require.Zero(t, st.Round)
	require.Equal(t, task, st.Conversation[0].Content, "the user message is never shortened")
}
