package console

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/console/openapi"
	"github.com/toolround/toolround/console/openapi/openapitest"
)

// Every API response these tests receive through http.DefaultTransport is
// checked against the OpenAPI document (X1).
func init() { openapitest.Install(nil) }

// documentPaths maps the mux's API patterns to the document's paths: the
// mux takes a workflow id as one {...} wildcard, the document spells out
// the id shapes the console acts on.
var documentPaths = map[string][]string{
	"GET /api/v1/rounds/{workflow_id...}": {"GET /api/v1/rounds/toolround/{session}/{run}/{round}"},
	"GET /api/v1/agents/{workflow_id...}": {"GET /api/v1/agents/agentrun/{session}/{run}"},
	"POST /api/v1/agents/{path...}":       {"POST /api/v1/agents/agentrun/{session}/{run}/messages"},
}

// apiRoutes is every "METHOD /api/v1/..." pattern in the package's code:
// the route table.
func apiRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var routes []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, f, src, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			p, _ := strconv.Unquote(lit.Value)
			if method, path, ok := strings.Cut(p, " "); ok && strings.HasPrefix(path, "/api/v1/") {
				routes = append(routes, method+" "+path)
			}
			return true
		})
	}
	sort.Strings(routes)
	return routes
}

func TestOpenAPIHasEveryRouteX1(t *testing.T) {
	routes := apiRoutes(t)
	require.GreaterOrEqual(t, len(routes), 12, "the route table: %v", routes)
	c, err := openapitest.Shared()
	require.NoError(t, err)
	doc := map[string]bool{}
	for path, item := range c.Model().Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			doc[strings.ToUpper(method)+" "+path] = true
		}
	}
	seen := map[string]bool{}
	for _, r := range routes {
		want := documentPaths[r]
		if want == nil {
			want = []string{r}
		}
		for _, w := range want {
			require.True(t, doc[w], "the route %q is not in console/openapi/openapi.json (as %q)", r, w)
			seen[w] = true
		}
	}
	for d := range doc {
		require.True(t, seen[d], "the document has %q, which no route serves", d)
	}
}

func TestOpenAPIServedWithoutTokenX1(t *testing.T) {
	ts, _ := newTestServer(t)
	resp, err := http.Get(ts.URL + "/api/v1/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var doc map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	require.Equal(t, "3.1.0", doc["openapi"])
	var want map[string]any
	require.NoError(t, json.Unmarshal(openapi.JSON, &want))
	require.Equal(t, want, doc)
	code, body := do(t, ts, "POST", "/api/v1/openapi.json", "", "")
	require.Equal(t, http.StatusMethodNotAllowed, code)
	require.Equal(t, "method_not_allowed", body["error"])
}

func TestOpenAPIChecksResponsesX1(t *testing.T) {
	c, err := openapitest.Shared()
	require.NoError(t, err)
	req, _ := http.NewRequest("GET", "http://console/api/v1/inbox", nil)
	h := http.Header{"Content-Type": {"application/json"}}
	require.NoError(t, c.Response(req, 200, h, []byte(`[]`)))
	require.Error(t, c.Response(req, 200, h, []byte(`{"workflow_id":1}`)), "a body of another shape")
	require.Error(t, c.Response(req, 418, h, []byte(`{"error":"teapot"}`)), "an undocumented status")
	require.Error(t, c.Response(req, 401, h, []byte(`{"error":"nope"}`)), "an undocumented error code")
	require.NoError(t, c.Event([]byte(`{"id":"e1","type":"tool_result","time":"2026-01-01T00:00:00Z"}`)))
	require.Error(t, c.Event([]byte(`{"type":"tool_result"}`)), "an event without its id")
}

func TestOtherMethodsOfSubmitPathsAre405(t *testing.T) {
	ts, _ := newTestServer(t)
	for _, path := range []string{"/api/v1/rounds", "/api/v1/agents"} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			code, body := do(t, ts, method, path, agentToken, "")
			require.Equal(t, http.StatusMethodNotAllowed, code, "%s %s", method, path)
			require.Equal(t, "method_not_allowed", body["error"])
		}
	}
}
