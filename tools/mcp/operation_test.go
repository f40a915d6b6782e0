package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// A call carries its operation id in the request's _meta (SPEC R), beside
// the progress token.
func TestCallCarriesOperationIDInMeta(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "meta", Version: "1.0.0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Return the operation id."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			meta := req.Params.GetMeta()
			text := fmt.Sprintf("op=%v progress=%t", meta[round.OperationMetaKey], meta["progressToken"] != nil)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)

	_, reg := connect(t, Config{Servers: []ServerConfig{{Name: "m", URL: ts.URL}}})
	def, ok := reg.Lookup("mcp_m_whoami")
	require.True(t, ok, "%v", reg.Names())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := def.Handler(ctx, tools.Request{CallID: "c1", OperationID: "wf/run/c1", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "op=wf/run/c1 progress=true", res.Content)
}
