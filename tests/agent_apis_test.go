package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAgentRunOnEachAPI: the three-round script on the Messages and the
// Responses API: every model call made once and streamed, the thinking
// block or reasoning item sent back, each command once, the final answer.
func TestAgentRunOnEachAPI(t *testing.T) {
	for _, api := range []string{"anthropic", "responses"} {
		t.Run(api, func(t *testing.T) {
			m := newScriptedModel(t)
			e := newAgentEnv(t, m.modelServer, "LLM_API="+api)
			r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "--events", "append two lines to log.txt")
			st := requireAgentDone(t, e, m, r)
			for step := 1; step <= 4; step++ {
				require.Equal(t, 1, m.count(step), "model call %d was made once", step)
				require.Equal(t, 1, m.streamed(step), "model call %d streamed", step)
			}
			require.EqualValues(t, 3, m.sentBack.Load(), "every later call sent step 1's thinking or reasoning back")
			require.Contains(t, st.Conversation[2].Content, "run_command", "find_tools loaded the schema")
			require.Contains(t, r.stderr, "model_token")
			require.NotContains(t, r.stderr, "I need run_command", "thinking is not streamed")
		})
	}
}

// TestAgentRunOnEachAPISurvivesAKillInAModelCall: the worker killed
// during model call 2 repeats only that call; no completed call and no
// command runs again.
func TestAgentRunOnEachAPISurvivesAKillInAModelCall(t *testing.T) {
	for _, api := range []string{"anthropic", "responses"} {
		t.Run(api, func(t *testing.T) {
			m := newScriptedModel(t)
			m.holdStep(2)
			e := newEnv(t, append(m.env(), "LLM_API="+api)...)
			w := e.startWorker()
			done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
			require.Eventually(t, func() bool { return m.count(2) == 1 }, 60*time.Second, 10*time.Millisecond, "model call 2 never started")
			w.kill(t)
			m.releaseHold()
			e.startWorker()
			requireAgentDone(t, e, m, <-done)
			require.Equal(t, 2, m.count(2), "the interrupted call ran again, once")
			for _, step := range []int{1, 3, 4} {
				require.Equal(t, 1, m.count(step), "model call %d completed and was made once", step)
			}
		})
	}
}
