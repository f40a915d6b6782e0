package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// A server that offers resources gets one more tool, mcp_<server>_read_resource,
// which reads a resource by its URI through that server's resources/read:
// the resource links its tools return become readable, and a URI a server
// names is never fetched by the worker itself.

// readResourceTool is the server-side name the read tool is named after.
const readResourceTool = "read_resource"

// readArgs are the read tool's arguments.
type readArgs struct {
	URI string `json:"uri"`
}

var readSchema = json.RawMessage(`{"type":"object","required":["uri"],"properties":{"uri":{"type":"string","minLength":1,"description":"The resource's URI, as the server named it (a resource link of a tool's result, or its resource list)."}},"additionalProperties":false}`)

// readDefinition is the read tool of s, named name.
func (m *Manager) readDefinition(s *server, name string) tools.Definition {
	timeout := m.timeoutOf(s)
	return tools.Definition{
		Name: name,
		Description: fmt.Sprintf("Read a resource of the MCP server %q by its URI (resources/read), such as a resource link one of its tools returned. "+
			"Text comes back as text, images as images, other binary content as its type and size.", s.cfg.Name),
		Parameters:         readSchema,
		SideEffect:         tools.ReadOnly,
		Timeout:            timeout + callGrace,
		Source:             tools.SourceMCP,
		TrustReadOnlyHints: s.cfg.TrustReadOnlyHints,
		Handler:            s.readHandler(m.cfg.MaxOutputBytes, timeout),
	}
}

// readHandler reads one resource within timeout. Reading changes nothing,
// so a connection lost on the way is tried again on a new session once,
// and a server out of reach is a transient failure.
func (s *server) readHandler(maxOutput int, timeout time.Duration) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		var a readArgs
		if err := json.Unmarshal(req.Args, &a); err != nil || strings.TrimSpace(a.URI) == "" {
			return tools.Result{}, fmt.Errorf("mcp server %q, %s: give the resource's uri", s.cfg.Name, readResourceTool)
		}
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := s.readResource(callCtx, a.URI)
		switch {
		case err != nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			return tools.Result{}, fmt.Errorf("mcp server %q, %s: the server did not answer within its timeout of %s (timeout_seconds of its MCP_CONFIG entry, else the default)",
				s.cfg.Name, readResourceTool, timeout)
		case err != nil && (errors.Is(err, errUnreachable) || connectionFailed(err)) && ctx.Err() == nil:
			return tools.Result{}, tools.Transient(fmt.Errorf("mcp server %q, %s %s: %w", s.cfg.Name, readResourceTool, a.URI, err))
		case err != nil:
			return tools.Result{}, fmt.Errorf("mcp server %q, %s %s: %w", s.cfg.Name, readResourceTool, a.URI, err)
		}
		content, images := resourceContents(res.Contents, maxOutput, s.keeper(ctx))
		return tools.Result{Content: content, Images: images}, nil
	}
}

// readResource sends resources/read, on a new session once if the current
// one is lost.
func (s *server) readResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	params := &sdk.ReadResourceParams{URI: uri}
	for try := 0; ; try++ {
		sess, _, err := s.session(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUnreachable, err)
		}
		res, err := sess.ReadResource(ctx, params)
		if err == nil || try > 0 || ctx.Err() != nil || !connectionFailed(err) {
			return res, err
		}
		s.drop(sess)
	}
}

// resourceContents is the text of a resource's contents and its images:
// text as it is, an image blob as an image (with a line in the text, as a
// tool result's images have), a text blob in UTF-8 as text, any other blob
// as its type and size, its bytes kept where keep keeps them.
func resourceContents(contents []*sdk.ResourceContents, limit int, keep keeper) (string, []round.Image) {
	var parts []string
	var images []round.Image
	for _, c := range contents {
		switch {
		case c == nil:
		case isImageBlob(c):
			images = append(images, round.Image{MIMEType: c.MIMEType, Size: len(c.Blob), Data: c.Blob})
			parts = append(parts, imageLine(c.MIMEType, len(c.Blob)))
		case len(c.Blob) > 0 && strings.HasPrefix(c.MIMEType, "text/") && utf8.Valid(c.Blob):
			parts = append(parts, string(c.Blob))
		case len(c.Blob) > 0:
			parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes%s]", c.URI, c.MIMEType, len(c.Blob), keep.kept(c.Blob)))
		default:
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 {
		return "the resource is empty", nil
	}
	return text.Truncate(strings.Join(parts, "\n"), limit, text.MoreBytes), images
}

// offersResources reports whether the server's session declares resources.
func offersResources(sess *sdk.ClientSession) bool {
	init := sess.InitializeResult()
	return init != nil && init.Capabilities != nil && init.Capabilities.Resources != nil
}
