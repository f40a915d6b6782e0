//lint:file-ignore SA1019 roots are deprecated in 2026-07-28, and servers still ask for them

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// rootsServer's tool "where" asks for roots (a 2026-07-28 input request;
// the handler is stateless, as 2026-07-28 servers are) and answers with
// the roots it was given.
func rootsServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "roots", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "where", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			got, ok := req.Params.InputResponses["roots"].(*sdk.ListRootsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil
			}
			var uris []string
			for _, r := range got.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "roots: " + strings.Join(uris, " ")}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func TestRootsAreTheCallsWorkspace(t *testing.T) {
	where := func(reg *tools.Registry, ctx context.Context) string {
		def, ok := reg.Lookup("mcp_roots_where")
		require.True(t, ok, "%v", reg.Names())
		res, err := def.Handler(ctx, tools.Request{CallID: "w1", Args: json.RawMessage(`{}`)})
		require.NoError(t, err)
		return res.Content
	}
	url := rootsServer(t)

	// Shared mode: the worker's folder.
	_, reg := connect(t, Config{Dir: "/srv/work", Servers: []ServerConfig{{Name: "roots", URL: url}}})
	require.Equal(t, "roots: file:///srv/work", where(reg, context.Background()))

	// Session mode: the call's session's folder, never the folder of every
	// session's; a call without a known workspace gets no root.
	_, reg = connect(t, Config{Dir: "/srv/work", Servers: []ServerConfig{{Name: "roots", URL: url}},
		Workspace: func(ctx context.Context) (string, error) {
			id := tools.SessionFrom(ctx)
			if id == "" {
				return "", errors.New("no session")
			}
			return "/srv/work/sessions/" + id, nil
		}})
	require.Equal(t, "roots: file:///srv/work/sessions/alice", where(reg, tools.WithSession(context.Background(), "alice")))
	require.Equal(t, "roots: file:///srv/work/sessions/bob", where(reg, tools.WithSession(context.Background(), "bob")))
	require.Equal(t, "roots: ", where(reg, context.Background()))
}
