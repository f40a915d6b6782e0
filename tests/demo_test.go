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
func TestDemoRunsAnAgentRunPerAPI(t *testing.T) {
	script, err := os.ReadFile("../scripts/run.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`\$\{WORKSPACE:=(\w+)\}`).FindSubmatch(script)
	require.NotNil(t, m, "scripts/run.sh sets the worker's WORKSPACE")
	require.Equal(t, "session", string(m[1]), "make run's worker keeps each session in its own workspace")
	e := newEnv(t, "WORKSPACE="+string(m[1]))
	bin := filepath.Join(binDir, "demo")
	out, err := exec.Command("go", "build", "-o", bin, "../examples/demo").CombinedOutput()
	require.NoError(t, err, string(out))
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(e.environ(), "LLM_BASE_URL=")
	cmd.Dir = e.workdir
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	s := string(out)
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
