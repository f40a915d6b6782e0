package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

var logo = []byte("\x89PNG\r\n\x1a\nlogo")

// docsServer offers resources and a tool that links to one of them; with
// ownReader it also has a tool of its own named read_resource.
func docsServer(t *testing.T, ownReader bool, reads *atomic.Int64) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "find", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "found one"},
				&sdk.ResourceLink{URI: "docs://guide", Name: "guide"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "docs://logo", MIMEType: "image/png", Blob: logo}},
			}}, nil
		})
	if ownReader {
		srv.AddTool(&sdk.Tool{Name: "read_resource", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the server's own"}}}, nil
			})
	}
	add := func(uri, mime string, c *sdk.ResourceContents) {
		srv.AddResource(&sdk.Resource{URI: uri, Name: uri, MIMEType: mime}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			reads.Add(1)
			c.URI = req.Params.URI
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
		})
	}
	add("docs://guide", "text/markdown", &sdk.ResourceContents{MIMEType: "text/markdown", Text: "# Guide\nStep one."})
	add("docs://logo", "image/png", &sdk.ResourceContents{MIMEType: "image/png", Blob: logo})
	add("docs://notes", "text/plain", &sdk.ResourceContents{MIMEType: "text/plain", Blob: []byte("notes in a blob")})
	add("docs://data", "application/octet-stream", &sdk.ResourceContents{MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func read(t *testing.T, reg *tools.Registry, name, uri string) (tools.Result, error) {
	t.Helper()
	def, ok := reg.Lookup(name)
	require.True(t, ok, "tool %s is not registered; have %v", name, reg.Names())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"uri": uri})
	return def.Handler(ctx, tools.Request{CallID: "r1", Args: args})
}

func TestResourceLinksAreReadThroughTheServer(t *testing.T) {
	var reads atomic.Int64
	_, reg := connect(t, Config{Servers: []ServerConfig{{Name: "docs", URL: docsServer(t, false, &reads)}}})
	def, ok := reg.Lookup("mcp_docs_read_resource")
	require.True(t, ok, "a server that offers resources gets a read tool; have %v", reg.Names())
	require.Equal(t, tools.ReadOnly, def.SideEffect)
	require.Equal(t, tools.SourceMCP, def.Source)
	require.Contains(t, def.Description, `"docs"`)

	// The link names the tool that reads it; an embedded image keeps its bytes.
	found, ok := reg.Lookup("mcp_docs_find")
	require.True(t, ok)
	res, err := found.Handler(context.Background(), tools.Request{CallID: "c1", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "found one\n[resource link docs://guide guide; read it with mcp_docs_read_resource]\n[image image/png, 12 bytes]", res.Content)
	require.Equal(t, []round.Image{{MIMEType: "image/png", Size: len(logo), Data: logo}}, res.Images)

	got, err := read(t, reg, "mcp_docs_read_resource", "docs://guide")
	require.NoError(t, err)
	require.Equal(t, "# Guide\nStep one.", got.Content)
	require.Empty(t, got.Images)

	got, err = read(t, reg, "mcp_docs_read_resource", "docs://logo")
	require.NoError(t, err)
	require.Equal(t, "[image image/png, 12 bytes]", got.Content)
	require.Equal(t, []round.Image{{MIMEType: "image/png", Size: len(logo), Data: logo}}, got.Images)

	got, err = read(t, reg, "mcp_docs_read_resource", "docs://notes")
	require.NoError(t, err)
	require.Equal(t, "notes in a blob", got.Content, "a text blob is text")

	got, err = read(t, reg, "mcp_docs_read_resource", "docs://data")
	require.NoError(t, err)
	require.Equal(t, "[resource docs://data application/octet-stream, 3 bytes]", got.Content)
	require.Equal(t, int64(4), reads.Load(), "each read went to the server")

	// A URI the server does not have, or none at all: a clear error that
	// names the server, never a fetch by the worker.
	_, err = read(t, reg, "mcp_docs_read_resource", "https://example.com/secret")
	require.ErrorContains(t, err, `mcp server "docs", read_resource https://example.com/secret`)
	require.False(t, tools.IsTransient(err))
	def, _ = reg.Lookup("mcp_docs_read_resource")
	_, err = def.Handler(context.Background(), tools.Request{CallID: "r2", Args: json.RawMessage(`{}`)})
	require.ErrorContains(t, err, "give the resource's uri")
}

func TestServerWithoutResourcesHasNoReadTool(t *testing.T) {
	_, reg := connect(t, Config{Servers: []ServerConfig{{Name: "plain", URL: fixtureURL(t)}}})
	for _, n := range reg.Names() {
		require.False(t, strings.HasSuffix(n, "read_resource"), "%s", n)
	}
}

func TestServersOwnReadResourceToolKeepsItsName(t *testing.T) {
	var reads atomic.Int64
	_, reg := connect(t, Config{Servers: []ServerConfig{{Name: "docs", URL: docsServer(t, true, &reads)}}})
	own, err := call(t, reg, "mcp_docs_read_resource", `{}`)
	require.NoError(t, err)
	require.Equal(t, "the server's own", own)
	var reader string
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, "mcp_docs_read_resource_") {
			reader = n
		}
	}
	require.NotEmpty(t, reader, "the read tool takes a hashed name: %v", reg.Names())
	got, err := read(t, reg, reader, "docs://guide")
	require.NoError(t, err)
	require.Equal(t, "# Guide\nStep one.", got.Content)
	found, err := call(t, reg, "mcp_docs_find", `{}`)
	require.NoError(t, err)
	require.Contains(t, found, "read it with "+reader)
}

// fixtureURL serves the fixture server, which offers no resources.
func fixtureURL(t *testing.T) string {
	t.Helper()
	srv := fixture.New()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// memBlobs is a blob store in memory.
type memBlobs struct {
	mu   sync.Mutex
	kept map[string]string
	fail bool
}

func (b *memBlobs) Put(_ context.Context, content string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return "", errors.New("the store is down")
	}
	if b.kept == nil {
		b.kept = map[string]string{}
	}
	ref := fmt.Sprintf("blob:%d", len(b.kept)+1)
	b.kept[ref] = content
	return ref, nil
}

// TestBytesNoFormatCarriesAreKept: a binary resource's bytes, which no
// format passes to a model, are kept in the worker's blob store (base64)
// under the reference its line names; when the store fails the line gives
// their type and size alone, and the call still answers (item 4 of E).
func TestBytesNoFormatCarriesAreKept(t *testing.T) {
	var reads atomic.Int64
	blobs := &memBlobs{}
	_, reg := connect(t, Config{Blobs: blobs, Servers: []ServerConfig{{Name: "docs", URL: docsServer(t, false, &reads)}}})
	got, err := read(t, reg, "mcp_docs_read_resource", "docs://data")
	require.NoError(t, err)
	require.Equal(t, "[resource docs://data application/octet-stream, 3 bytes; kept as blob:1]", got.Content)
	raw, err := base64.StdEncoding.DecodeString(blobs.kept["blob:1"])
	require.NoError(t, err)
	require.Len(t, raw, 3)

	blobs.fail = true
	got, err = read(t, reg, "mcp_docs_read_resource", "docs://data")
	require.NoError(t, err)
	require.Equal(t, "[resource docs://data application/octet-stream, 3 bytes]", got.Content)
}

// TestAudioIsKept: a result's audio is kept as a binary resource is, and
// an image is not: it travels as an image.
func TestAudioIsKept(t *testing.T) {
	blobs := &memBlobs{}
	s := &server{opts: Config{Blobs: blobs}, log: quiet}
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
	}}
	require.Equal(t, "[image image/png, 2 bytes]\n[audio audio/wav, 4 bytes; kept as blob:1]", resultText(res, 1000, "", s.keeper(context.Background())))
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte("RIFF")), blobs.kept["blob:1"])
	require.Len(t, blobs.kept, 1)
}
