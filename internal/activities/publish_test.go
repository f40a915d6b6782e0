package activities

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

type mapCache map[string]string

func (m mapCache) Get(_ context.Context, key string) (string, bool) { v, ok := m[key]; return v, ok }
func (m mapCache) Set(_ context.Context, key, content string, _ time.Duration) {
	m[key] = content
}

type mapBlobs map[string]string

func (m mapBlobs) Put(context.Context, string) (string, error) { return "", errors.New("unused") }
func (m mapBlobs) Get(_ context.Context, ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", errors.New("blob " + ref + " has expired")
}

// TestPublishRoundCachesWholeResults: the result cache gets the whole
// content of a large http_request GET, never the preview that history holds,
// under the key of the tool's definition; a tool whose definition keeps no
// results gets nothing written.
func TestPublishRoundCachesWholeResults(t *testing.T) {
	const args = `{"url":"http://x/a"}`
	key := tools.HTTPRequestCacheKey("s", args)
	tests := []struct {
		name  string
		blobs BlobStore
		write wire.CacheWrite
		want  string // "" means nothing is cached
	}{
		{"small", mapBlobs{}, wire.CacheWrite{Tool: "http_request", Args: args, Content: "whole"}, "whole"},
		{"large", mapBlobs{"toolround:blob:1": "the whole result"}, wire.CacheWrite{Tool: "http_request", Args: args, Content: "preview", ContentRef: "toolround:blob:1"}, "the whole result"},
		{"blob gone", mapBlobs{}, wire.CacheWrite{Tool: "http_request", Args: args, Content: "preview", ContentRef: "toolround:blob:1"}, ""},
		{"no blob store", nil, wire.CacheWrite{Tool: "http_request", Args: args, Content: "preview", ContentRef: "toolround:blob:1"}, ""},
		{"tool without a cache key", mapBlobs{}, wire.CacheWrite{Tool: "fetch_page", Args: args, Content: "whole"}, ""},
		{"unknown tool", mapBlobs{}, wire.CacheWrite{Tool: "gone", Args: args, Content: "whole"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mapCache{}
			reg := tools.NewRegistry()
			noop := func(context.Context, tools.Request) (tools.Result, error) { return tools.Result{}, nil }
			require.NoError(t, reg.RegisterAll(
				tools.Definition{Name: "http_request", SideEffect: tools.AtMostOnce, CacheKey: tools.HTTPRequestCacheKey, Handler: noop},
				tools.Definition{Name: "fetch_page", SideEffect: tools.ReadOnly, Handler: noop}))
			a := &Activities{Registry: reg, Cache: c, Blobs: tt.blobs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			require.NoError(t, a.PublishRound(context.Background(), wire.PublishInput{SessionID: "s", WorkflowID: "wf", CacheWrites: []wire.CacheWrite{tt.write}}))
			got, ok := c[key]
			require.Equal(t, tt.want != "", ok)
			if tt.want == "" {
				require.Empty(t, c)
			}
			require.Equal(t, tt.want, got)
		})
	}
}
