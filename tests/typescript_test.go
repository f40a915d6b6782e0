package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolround/toolround/internal/testenv"
)

// typescriptClient is the TypeScript client's folder with its dev
// dependencies installed (scripts/lib.sh's ensure_node_tools runs `npm ci`
// there), built anew from its sources so that the tests never run a stale
// dist/; it returns the node that runs the tests (TOOLROUND_NODE, else node
// from PATH) and the folder.
func typescriptClient(t *testing.T, modules ...string) (node, dir string) {
	t.Helper()
	node = nodeBin(t)
	dir, err := filepath.Abs(filepath.Join("..", "clients", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range append([]string{"typescript"}, modules...) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m, "package.json")); err != nil {
			testenv.Unavailable(t, "clients/typescript/node_modules lacks %s (scripts/lib.sh's ensure_node_tools runs npm ci there)", m)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tsc in clients/typescript: %v\n%s", err, out)
	}
	return node, dir
}

// nodeBin is the node that runs the tests' JavaScript: TOOLROUND_NODE,
// else node from PATH.
func nodeBin(t *testing.T) string {
	t.Helper()
	if node := os.Getenv("TOOLROUND_NODE"); node != "" {
		return node
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Unavailable(t, "node is not on PATH (scripts/lib.sh's ensure_node_tools checks for Node.js 18 or newer)")
	}
	return node
}

// runNPM runs npm with args in dir, which it makes if missing, for at
// most five minutes; without npm on PATH the test is unavailable, as dir
// lacks what lacks says.
func runNPM(t *testing.T, dir, lacks string, args ...string) ([]byte, error) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Unavailable(t, "npm is not on PATH, and %s", lacks)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// nodeTest runs `node --test` on the compiled test files given (relative to
// clients/typescript) against a console and worker, with the variables that
// clients/typescript/src/test/live.ts reads.
func nodeTest(t *testing.T, e *env, c *consoleProc, node, dir string, files ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = dir
	// Skipped tests fail instead: every variable is set here.
	cmd.Env = append(append(os.Environ(), clientEnv(e, c)...), "CI=true")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s:\n%s", strings.Join(files, " "), out)
	if err != nil {
		t.Fatalf("node --test failed: %v", err)
	}
	if strings.Contains(string(out), "# SKIP") {
		t.Fatalf("node --test skipped tests although every variable is set")
	}
}

// TestTypeScriptClient runs the TypeScript client's tests (X3, U9) against
// the real console and worker, and the drift test of its generated types.
func TestTypeScriptClient(t *testing.T) {
	node, dir := typescriptClient(t)
	e, bookings := elicitEnv(t) // an MCP server that asks for input (E1)
	t.Setenv("TOOLROUND_BOOKINGS", bookings)
	e.startWorker()
	c := e.startConsole()
	nodeTest(t, e, c, node, dir, "dist/test/client.test.js", "dist/test/types.test.js", "dist/test/examples.test.js")
}

// TestTypeScriptAdapters runs the Vercel AI SDK and LangGraph JS adapters
// (X4) against the real worker, with the AI SDK's MockLanguageModelV3 and
// @langchain/core's fake chat model, and their examples, whose own tools a
// tool worker serves on a queue of the worker's TOOL_QUEUES (Y6).
func TestTypeScriptAdapters(t *testing.T) {
	node, dir := typescriptClient(t, "ai", "@langchain/langgraph", "@langchain/core", "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "zod")
	requireNode20(t, node)
	e, c := ownToolsEnv(t, "adapters-")
	nodeTest(t, e, c, node, dir, "dist/test/ai.test.js", "dist/test/langgraph.test.js", "dist/test/adapter-examples.test.js")
}

// TestTypeScriptToolWorkers runs the tests of toolround/tools, the
// TypeScript tool workers (Y1, Y1a, docs/your-own-tools.md): the schemas
// from zod, the wire of one call, and tool workers served on the real
// Temporal server, announcing to a test double of the catalog and called
// by a test double of a round, with heartbeats and cancels. CI=true makes
// them fail where they would skip.
func TestTypeScriptToolWorkers(t *testing.T) {
	requireTemporal(t)
	node, dir := typescriptClient(t, "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "@temporalio/workflow", "zod")
	requireNode20(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "dist/test/tools.test.js", "dist/test/tools-live.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddress(), "CI=true")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test dist/test/tools.test.js dist/test/tools-live.test.js:\n%s", out)
	if err != nil {
		t.Fatalf("node --test failed: %v", err)
	}
	if strings.Contains(string(out), "# SKIP") || !strings.Contains(string(out), "skipped 0") {
		t.Fatalf("node --test skipped tests although the Temporal server is there")
	}
}

// requireNode20 reports node older than 20, which toolround/tools (and the
// Temporal TypeScript SDK) need, as unavailable: a skip, or a failure under
// CI=true.
func requireNode20(t *testing.T, node string) {
	t.Helper()
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		t.Fatalf("%s -p: %v", node, err)
	}
	if major, _ := strconv.Atoi(strings.TrimSpace(string(out))); major < 20 {
		testenv.Unavailable(t, "node %s is older than 20, which toolround/tools needs", strings.TrimSpace(string(out)))
	}
}
