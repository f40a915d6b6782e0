package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
)

// The official MCP conformance suite and the Node.js it needs (22 or newer),
// both from npm, installed into .tools/mcp-conformance by scripts/lib.sh's
// ensure_node_tools (or by the test when they are missing).
const (
	conformanceVersion = "0.1.16"
	conformanceNode    = "22.23.3"
	conformanceSpec    = "2025-11-25"
)

// conformanceSuite returns the node binary of the node@22 package and the
// suite's command-line entry point.
func conformanceSuite(t *testing.T) (node, cli string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".tools", "mcp-conformance"))
	require.NoError(t, err)
	modules := filepath.Join(dir, "node_modules")
	node = filepath.Join(modules, ".bin", "node")
	cli = filepath.Join(modules, "@modelcontextprotocol", "conformance", "dist", "index.js")
	installed := func() bool {
		var pkg struct{ Version string }
		b, err := os.ReadFile(filepath.Join(modules, "@modelcontextprotocol", "conformance", "package.json"))
		if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != conformanceVersion {
			return false
		}
		out, err := exec.Command(node, "--version").Output()
		return err == nil && strings.TrimSpace(string(out)) == "v"+conformanceNode
	}
	if !installed() {
		if out, err := runNPM(t, dir, ".tools/mcp-conformance lacks the MCP conformance suite", "install", "--no-audit", "--no-fund", "--loglevel=error",
			"--prefix", dir, "@modelcontextprotocol/conformance@"+conformanceVersion, "node@"+conformanceNode); err != nil || !installed() {
			testenv.Unavailable(t, "npm install of the MCP conformance suite and node@%s failed: %v\n%s", conformanceNode, err, out)
		}
	}
	return node, cli
}

// baselineScenarios are the client scenarios tests/mcpconformance/baseline.yml
// lists as unsupported (none today: "client: []").
func baselineScenarios(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("mcpconformance", "baseline.yml"))
	require.NoError(t, err)
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			out[strings.TrimSpace(s)] = true
		}
	}
	return out
}

// summaryLine is one scenario of the suite's summary: "✓ initialize: 1
// passed, 0 failed".
var summaryLine = regexp.MustCompile(`(?m)^[✓✗] (\S+): (\d+) passed, (\d+) failed`)

// TestMCPConformanceClientScenarios runs every 2025-11-25 client scenario of
// the official MCP conformance suite against the worker's MCP client
// (tools/mcp, driven by tests/mcpconformance): each passes, except those
// the baseline lists as unsupported, which fail (issue 28, item 6).
func TestMCPConformanceClientScenarios(t *testing.T) {
	node, cli := conformanceSuite(t)
	client := filepath.Join(t.TempDir(), "mcpconformance")
	out, err := exec.Command("go", "build", "-o", client, "./mcpconformance").CombinedOutput()
	require.NoError(t, err, string(out))
	baseline, err := filepath.Abs(filepath.Join("mcpconformance", "baseline.yml"))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results := t.TempDir()
	cmd := exec.CommandContext(ctx, node, cli, "client", "--command", client, "--suite", "all",
		"--spec-version", conformanceSpec, "--expected-failures", baseline, "-o", results)
	cmd.Dir = results
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, runErr := cmd.CombinedOutput()
	log := string(b)
	_, summary, _ := strings.Cut(log, "=== SUITE SUMMARY ===")

	unsupported := baselineScenarios(t)
	var passed, failed, seen []string
	checks := 0
	for _, m := range summaryLine.FindAllStringSubmatch(summary, -1) {
		name := m[1]
		ok, _ := strconv.Atoi(m[2])
		bad, _ := strconv.Atoi(m[3])
		seen = append(seen, name)
		if bad == 0 && ok > 0 {
			passed = append(passed, name)
			checks += ok
		} else {
			failed = append(failed, name)
		}
	}
	sort.Strings(passed)
	sort.Strings(failed)
	require.GreaterOrEqual(t, len(seen), 4, "the suite ran no scenarios:\n%s", log)
	for _, name := range failed {
		require.True(t, unsupported[name], "scenario %s fails and is not in the baseline:\n%s", name, log)
	}
	for name := range unsupported {
		require.Contains(t, failed, name, "scenario %s passes: take it out of the baseline", name)
	}
	for _, name := range []string{"initialize", "tools_call", "sse-retry"} {
		require.Contains(t, passed, name)
	}
	require.NoError(t, runErr, "the suite disagrees with the baseline:\n%s", log)
	t.Logf("MCP conformance, spec %s, client scenarios: %d of %d pass (%d checks): %s; unsupported (baseline): %s",
		conformanceSpec, len(passed), len(seen), checks, strings.Join(passed, ", "), strings.Join(failed, ", "))
}
