package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
)

// conformanceServerVersion is the conformance suite whose server mode runs
// against the gateway: the first release with the scenarios Z5 names
// (server-session-lifecycle, server-stateless and caching are not in
// conformanceVersion, the client scenarios' release). scripts/lib.sh's
// ensure_node_tools installs it into .tools/mcp-conformance-server; it
// runs on conformanceSuite's node.
const conformanceServerVersion = "0.2.0-alpha.12"

// conformanceServerSuite returns the node and the command-line entry point
// of the suite's server mode.
func conformanceServerSuite(t *testing.T) (node, cli string) {
	t.Helper()
	node, _ = conformanceSuite(t)
	dir, err := filepath.Abs(filepath.Join("..", ".tools", "mcp-conformance-server"))
	require.NoError(t, err)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")
	cli = filepath.Join(pkg, "dist", "index.js")
	installed := func() bool {
		var p struct{ Version string }
		b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
		return err == nil && json.Unmarshal(b, &p) == nil && p.Version == conformanceServerVersion
	}
	if !installed() {
		npm, err := exec.LookPath("npm")
		if err != nil {
			testenv.Unavailable(t, "npm is not on PATH, and .tools/mcp-conformance-server lacks the MCP conformance suite %s", conformanceServerVersion)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		require.NoError(t, os.MkdirAll(dir, 0o755))
		install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir,
			"@modelcontextprotocol/conformance@"+conformanceServerVersion)
		if out, err := install.CombinedOutput(); err != nil || !installed() {
			testenv.Unavailable(t, "npm install of the MCP conformance suite %s failed: %v\n%s", conformanceServerVersion, err, out)
		}
	}
	return node, cli
}

// serverScenario is one line of tests/mcpconformance/server-scenarios.txt:
// a scenario and the protocol revision it runs at.
type serverScenario struct{ name, spec string }

func serverScenarios(t *testing.T) []serverScenario {
	t.Helper()
	f, err := os.Open(filepath.Join("mcpconformance", "server-scenarios.txt"))
	require.NoError(t, err)
	defer f.Close()
	var out []serverScenario
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		require.Len(t, fields, 2, "server-scenarios.txt: %q: want a scenario and a revision", sc.Text())
		out = append(out, serverScenario{name: fields[0], spec: fields[1]})
	}
	require.NoError(t, sc.Err())
	return out
}

// tokenProxy is the local proxy in front of the gateway that adds an agent
// token to every request and leaves everything else, Host and Origin
// included, as the client sent it; the console's CONSOLE_URL is the
// proxy's, as behind any proxy.
type tokenProxy struct {
	ln  net.Listener
	url string
}

func newTokenProxy(t *testing.T) *tokenProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return &tokenProxy{ln: ln, url: "http://" + ln.Addr().String()}
}

// serve forwards to the console at target with token.
func (p *tokenProxy) serve(t *testing.T, target, token string) {
	t.Helper()
	to, err := url.Parse(target)
	require.NoError(t, err)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = to.Scheme, to.Host
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(p.ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// TestMCPGatewayConformanceServerZ5 runs the official MCP conformance
// suite's server mode against the gateway through a proxy that adds the
// agent token, for the scenarios tests/mcpconformance/server-scenarios.txt
// lists (those that need no suite fixtures, Z5), each at its revision;
// tests/mcpconformance/server-baseline.yml names the checks that need the
// suite's fixture tools, which the gateway does not have.
func TestMCPGatewayConformanceServerZ5(t *testing.T) {
	node, cli := conformanceServerSuite(t)
	scenarios := serverScenarios(t)
	baseline, err := filepath.Abs(filepath.Join("mcpconformance", "server-baseline.yml"))
	require.NoError(t, err)

	e := newEnv(t)
	e.startWorker()
	p := newTokenProxy(t)
	c := e.startConsoles(1, "CONSOLE_URL="+p.url)[0]
	p.serve(t, c.url, c.agent)
	endpoint := p.url + "/api/v1/mcp?session=" + e.session + "&run=conformance"

	var summary []string
	for _, sc := range scenarios {
		ok := t.Run(sc.name+"@"+sc.spec, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			results := t.TempDir()
			cmd := exec.CommandContext(ctx, node, cli, "server", "--url", endpoint, "--scenario", sc.name,
				"--spec-version", sc.spec, "--expected-failures", baseline, "-o", results)
			cmd.Dir = results
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			t.Logf("conformance server --scenario %s --spec-version %s:\n%s", sc.name, sc.spec, out)
			require.NotContains(t, string(out), "Unknown scenario")
			require.NoError(t, err, "the scenario disagrees with the baseline")
		})
		verdict := "pass"
		if !ok {
			verdict = "FAIL"
		}
		summary = append(summary, sc.name+"@"+sc.spec+": "+verdict)
	}
	t.Logf("MCP conformance %s, server scenarios against the gateway:\n%s", conformanceServerVersion, strings.Join(summary, "\n"))
}
