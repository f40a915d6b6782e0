package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolround/toolround/internal/testenv"
)

// python is the interpreter that runs the Python client's tests:
// TOOLROUND_PYTHON (scripts/lib.sh's ensure_python_tools sets it to its
// virtualenv's), else python3 from PATH.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	py := os.Getenv("TOOLROUND_PYTHON")
	if py == "" {
		var err error
		if py, err = exec.LookPath("python3"); err != nil {
			testenv.Unavailable(t, "python3 is not on PATH (scripts/lib.sh's ensure_python_tools installs the Python tools)")
		}
	}
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			testenv.Unavailable(t, "%s cannot import %s (scripts/lib.sh's ensure_python_tools installs it): %v\n%s", py, m, err, out)
		}
	}
	return py
}

// pytest runs the pytest files given (relative to the repository root)
// against a console and worker, with the variables that
// clients/python/tests/conftest.py reads.
func pytest(t *testing.T, e *env, c *consoleProc, py string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, append([]string{"-m", "pytest", "-q", "-p", "no:cacheprovider"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), clientEnv(e, c)...),
		"PYTHONPATH="+filepath.Join(root, "clients", "python", "src"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("pytest %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("pytest failed: %v", err)
	}
}

// clientEnv is what the clients' tests read of the console c and the env
// e (clients/python/tests/conftest.py, clients/typescript/src/test/live.ts).
func clientEnv(e *env, c *consoleProc) []string {
	return []string{
		"TOOLROUND_URL=" + c.url,
		"TOOLROUND_APPROVER_TOKEN=" + c.approver,
		"TOOLROUND_AGENT_TOKEN=" + c.agent,
		"TOOLROUND_SESSION=" + e.session,
		"TOOLROUND_WORKDIR=" + e.workdir,
	}
}

// TestPythonClient runs the Python client's tests (X2, U9) against the
// real console and worker, whose MCP server desk asks for input.
func TestPythonClient(t *testing.T) {
	e, bookings := elicitEnv(t) // an MCP server that asks for input (E1)
	t.Setenv("TOOLROUND_BOOKINGS", bookings)
	e.startWorker()
	c := e.startConsole()
	pytest(t, e, c, python(t, "pytest"), "clients/python/tests/test_client.py", "clients/python/tests/test_examples.py::test_quickstart_is_the_readme_snippet_and_runs")
}

// TestPythonAdapters runs the LangGraph and OpenAI Agents SDK adapters (X4)
// against the real worker, with LangGraph's fake chat model and a scripted
// Agents SDK Model, and the examples, whose own tools a tool worker serves
// on a queue of the worker's TOOL_QUEUES (Y6).
func TestPythonAdapters(t *testing.T) {
	e, c := ownToolsEnv(t, "adapters-")
	py := python(t, "pytest", "langgraph", "langgraph.checkpoint.sqlite", "agents", "temporalio", "pydantic")
	pytest(t, e, c, py, "clients/python/tests/test_langgraph.py", "clients/python/tests/test_openai_agents.py",
		"clients/python/tests/test_examples.py::test_example_runs")
}

// TestPythonToolWorkers runs the tests of the Python tool workers
// (clients/python's toolround.tools, docs/your-own-tools.md): the schemas,
// the wire of one call and the check command, and tool workers served on
// the real Temporal server, announcing to a test double of the catalog and
// called by a test double of a round, with heartbeats and cancels. CI=true
// makes pytest fail where it would skip.
func TestPythonToolWorkers(t *testing.T) {
	requireTemporal(t)
	py := python(t, "pytest", "temporalio", "pydantic")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "clients/python/tests/test_tools.py")
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+temporalAddress(),
		"CI=true",
		"PYTHONPATH="+filepath.Join(root, "clients", "python", "src"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("pytest clients/python/tests/test_tools.py:\n%s", out)
	if err != nil {
		t.Fatalf("pytest failed: %v", err)
	}
}
