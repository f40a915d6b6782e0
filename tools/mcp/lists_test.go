package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func addTextTool(srv *sdk.Server, name, reply string) {
	sdk.AddTool(srv, &sdk.Tool{Name: name, Description: "Reply " + reply + "."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: reply}}}, nil, nil
		})
}

// A server that adds a tool while the worker runs says so
// (notifications/tools/list_changed); the worker lists again and
// registers the new tool, which then runs. The old ones stay.
func TestToolAddedByTheServerIsRegistered(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "growing", Version: "1"}, nil)
	addTextTool(srv, "first", "one")
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "g", URL: ts.URL}}})
	require.Equal(t, []string{"first"}, status(m, "g").Tools)
	_, ok := reg.Lookup("mcp_g_second")
	require.False(t, ok)

	addTextTool(srv, "second", "two")
	require.Eventually(t, func() bool { _, ok := reg.Lookup("mcp_g_second"); return ok }, 10*time.Second, 20*time.Millisecond,
		"the added tool is registered")
	got, err := call(t, reg, "mcp_g_second", `{}`)
	require.NoError(t, err)
	require.Equal(t, "two", got)
	got, err = call(t, reg, "mcp_g_first", `{}`)
	require.NoError(t, err)
	require.Equal(t, "one", got)
	require.Equal(t, []string{"first", "second"}, status(m, "g").Tools)

	// The same list again registers nothing twice.
	m.servers[0].relist()
	require.Len(t, reg.Names(), 2)
}

// TestToolListIsKeptForItsTTL: a list that says how long it holds (ttlMs)
// is not asked for again within that time, and is at the first call after
// it (E2).
func TestToolListIsKeptForItsTTL(t *testing.T) {
	bin, err := taskServer()
	require.NoError(t, err)
	lists := filepath.Join(t.TempDir(), "lists")
	_, reg := connect(t, Config{CallTimeout: 20 * time.Second, Servers: []ServerConfig{
		{Name: "jobs", Command: bin, Env: map[string]string{"LIST_TTL_MS": "1500", "LIST_LOG": lists}},
	}})
	listed := func() int { return len(lines(t, lists)) }
	require.Equal(t, 1, listed())
	start := time.Now()
	_, err = run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"a"}`)}, false, nil)
	require.NoError(t, err)
	if time.Since(start) < time.Second {
		require.Equal(t, 1, listed(), "within its ttlMs the list is not asked for again")
	}
	require.Eventually(t, func() bool {
		_, err := run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"b"}`)}, false, nil)
		require.NoError(t, err)
		return listed() == 2
	}, 20*time.Second, 100*time.Millisecond, "a call after the ttlMs lists the tools again")
}
