package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemoRunsAnAgentRunPerAPI: `make run`'s demo (examples/demo) runs its
// rounds through a worker set up as `make run` sets it up (each session in
// its own workspace, WORKSPACE=session), then one agent run on each model
// API (F4: chat completions, the Messages API, the Responses API) against
// the scripted model it serves, and each ends with the same final answer.
// Before, it calls a Python tool of one's own in a round: the one of the
// file scripts/run.sh serves with `python -m toolround.tools serve` on the
// queue it names, which the worker runs (TOOL_QUEUES, Y1).
func TestDemoRunsAnAgentRunPerAPI(t *testing.T) {
	script, err := os.ReadFile("../scripts/run.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`\$\{WORKSPACE:=(\w+)\}`).FindSubmatch(script)
	require.NotNil(t, m, "scripts/run.sh sets the worker's WORKSPACE")
	require.Equal(t, "session", string(m[1]), "make run's worker keeps each session in its own workspace")
	queue := regexp.MustCompile(`export DEMO_TOOL_QUEUE=([\w-]+)`).FindSubmatch(script)
	require.NotNil(t, queue, "scripts/run.sh names the demo's tool queue")
	require.Contains(t, string(script), `export TOOL_QUEUES="$DEMO_TOOL_QUEUE:trusted"`, "and the worker runs it")
	served := regexp.MustCompile(`start_tool_worker "\$ROOT/([^"]+)" "\$DEMO_TOOL_QUEUE"`).FindSubmatch(script)
	require.NotNil(t, served, "scripts/run.sh serves a Python file on it")
	e := newEnv(t, "WORKSPACE="+string(m[1]))
	bin := filepath.Join(binDir, "demo")
	out, err := exec.Command("go", "build", "-o", bin, "../examples/demo").CombinedOutput()
	require.NoError(t, err, string(out))
	toolQueue := e.startWorkerForTools(string(queue[1])+"-", true)
	e.servePythonFile(filepath.Join("..", string(served[1])), toolQueue, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(e.environ(), "LLM_BASE_URL=", "DEMO_TOOL_QUEUE="+toolQueue)
	cmd.Dir = e.workdir
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	s := string(out)
	_, ownTool, ok := strings.Cut(s, "=== your own tool: lookup_order, a Python function served by a tool worker on task queue "+toolQueue)
	require.True(t, ok, "the demo calls its Python tool:\n%s", s)
	require.Regexp(t, `call_14 +lookup_order +ok +\(via run_tool\)\n +\{"order_id":"A-1001","status":"shipped"\}`, ownTool)
	for _, api := range []string{"chat", "anthropic", "responses"} {
		_, after, ok := strings.Cut(s, "=== agent run, LLM_API="+api+",")
		require.True(t, ok, "no agent run on %s:\n%s", api, s)
		require.Contains(t, after, "the run completed after 3 rounds and 4 model calls", api)
		require.Contains(t, after, `notes.md is 19 bytes (wc -c says so) and holds "written by round 2"; 6*7 is 42.`, api)
	}
	// Its last line is an agent run of one's own, which runs as shown.
	i := strings.Index(s, "  bin/starter agent ")
	require.GreaterOrEqual(t, i, 0, "the demo shows an agent run of one's own:\n%s", s)
	line, _, _ := strings.Cut(strings.TrimSpace(s[i:]), "\n")
	dir := t.TempDir()
	examples, err := filepath.Abs("../examples")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Dir(starterBin), filepath.Join(dir, "bin")))
	require.NoError(t, os.Symlink(examples, filepath.Join(dir, "examples")))
	own := exec.CommandContext(ctx, "bash", "-c", line)
	own.Dir, own.Env = dir, e.environ()
	got, err := own.Output()
	require.NoError(t, err, line)
	require.Equal(t, "6*7 is 42.\n", string(got), line)
	notes, err := filepath.Glob(filepath.Join(e.workdir, "sessions", "demo-*", "notes.md"))
	require.NoError(t, err)
	require.Len(t, notes, 1, "the demo's files are in its session's workspace")
	_, err = os.Stat(filepath.Join(e.workdir, "notes.md"))
	require.ErrorIs(t, err, os.ErrNotExist, "and not in the shared workdir")
}
