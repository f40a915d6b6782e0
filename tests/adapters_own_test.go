package tests

import (
	"testing"
)

// ownToolsEnv is an env whose worker runs the own tools of the queue
// prefix+its task queue, trusted, with a console; the variables that the
// clients' tests of own tools read name the queues and the Temporal server
// for the rest of the test.
func ownToolsEnv(t *testing.T, prefix string) (*env, *consoleProc) {
	t.Helper()
	e := newEnv(t)
	queue := e.startWorkerForTools(prefix, true)
	c := e.startConsole()
	t.Setenv("TOOLROUND_TOOL_QUEUE", queue)
	t.Setenv("TOOLROUND_TASK_QUEUE", e.taskQueue)
	t.Setenv("TEMPORAL_ADDRESS", temporalAddress())
	return e, c
}

// TestOpenAIAgentsOwnToolsY6 runs clients/python's
// test_openai_agents_own.py: the application's own function tools of the
// OpenAI Agents SDK, driven by a scripted Model, served by a tool worker in
// the test's process (and, for a real SIGKILL, in a process of its own) on
// the real Temporal server, and called by the real worker's rounds (Y6).
func TestOpenAIAgentsOwnToolsY6(t *testing.T) {
	py := python(t, "pytest", "agents", "temporalio", "pydantic")
	e, c := ownToolsEnv(t, "oa-own-")
	t.Setenv("CI", "true")
	pytest(t, e, c, py, "clients/python/tests/test_openai_agents_own.py", "clients/python/tests/test_openai_agents_schema.py")
}

// TestLangGraphOwnToolsY6 runs clients/python's test_langgraph_own.py: the
// application's own LangChain tools in a LangGraph graph's RoundToolNode,
// driven by LangChain's GenericFakeChatModel, served by a tool worker in
// the test's process (and, for a real SIGKILL, in a process of its own) on
// the real Temporal server, and called by the real worker's rounds, mixed
// with built-ins, through an interrupt and its resume (in the process, and
// in new processes from a SqliteSaver) (Y6).
func TestLangGraphOwnToolsY6(t *testing.T) {
	py := python(t, "pytest", "langgraph", "langgraph.checkpoint.sqlite", "temporalio", "pydantic")
	e, c := ownToolsEnv(t, "lg-own-")
	t.Setenv("CI", "true")
	pytest(t, e, c, py, "clients/python/tests/test_langgraph_own.py")
}

// TestAISDKOwnToolsY6 runs clients/typescript's ai-own.test.ts: the
// application's own tool()s of the Vercel AI SDK, driven by its
// MockLanguageModelV3, served by a tool worker of toolround/tools in the
// test's process (and, for real SIGKILLs, in a process of its own) on the
// real Temporal server, and called by the real worker's rounds (Y6).
func TestAISDKOwnToolsY6(t *testing.T) {
	node, dir := typescriptClient(t, "ai", "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "zod")
	requireNode20(t, node)
	e, c := ownToolsEnv(t, "ai-own-")
	nodeTest(t, e, c, node, dir, "dist/test/ai-own.test.js")
}

// TestLangGraphJSOwnToolsY6 runs clients/typescript's lg-own.test.ts: the
// application's own LangChain tools in a LangGraph JS graph's
// RoundToolNode, driven by @langchain/core's FakeStreamingChatModel, served
// by a tool worker of toolround/tools in the test's process (and, for real
// SIGKILLs, in a process of its own) on the real Temporal server, and called
// by the real worker's rounds, mixed with built-ins, through an interrupt
// and its resume (in the process, and in new processes from a checkpointer
// kept in a file) (Y6).
func TestLangGraphJSOwnToolsY6(t *testing.T) {
	node, dir := typescriptClient(t, "@langchain/langgraph", "@langchain/core", "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "zod")
	requireNode20(t, node)
	e, c := ownToolsEnv(t, "lgjs-own-")
	nodeTest(t, e, c, node, dir, "dist/test/lg-own.test.js")
}
