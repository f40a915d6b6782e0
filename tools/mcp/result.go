package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
)

// resultImages are the images of a tool result, in order, with their
// bytes (F2); its text keeps a line for each (resultText), so that a
// caller that reads only text sees that they were there.
func resultImages(res *sdk.CallToolResult) []round.Image {
	var out []round.Image
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.ImageContent:
			if len(c.Data) > 0 {
				out = append(out, round.Image{MIMEType: c.MIMEType, Size: len(c.Data), Data: c.Data})
			}
		case *sdk.EmbeddedResource:
			if r := c.Resource; isImageBlob(r) {
				out = append(out, round.Image{MIMEType: r.MIMEType, Size: len(r.Blob), Data: r.Blob})
			}
		}
	}
	return out
}

// isImageBlob reports whether a resource's contents are an image's bytes.
func isImageBlob(r *sdk.ResourceContents) bool {
	return r != nil && len(r.Blob) > 0 && strings.HasPrefix(r.MIMEType, "image/")
}

// imageLine is the text that stands for an image (F2).
func imageLine(mime string, size int) string {
	return fmt.Sprintf("[image %s, %d bytes]", mime, size)
}

// keeper keeps bytes that no format passes on (Config.Blobs) and says
// where; nil keeps nothing.
type keeper func([]byte) string

func (k keeper) kept(b []byte) string {
	if k == nil || len(b) == 0 {
		return ""
	}
	return k(b)
}

// keeper keeps bytes in the worker's blob store for ctx's call.
func (s *server) keeper(ctx context.Context) keeper {
	if s.opts.Blobs == nil {
		return nil
	}
	return func(b []byte) string {
		ref, err := s.opts.Blobs.Put(ctx, base64.StdEncoding.EncodeToString(b))
		if err != nil {
			s.log.Warn("mcp: keeping a result's bytes failed; its line gives only their type and size", "err", err)
			return ""
		}
		return "; kept as " + ref
	}
}

// resultText joins the text of a tool result. Text parts are kept as they
// are; other kinds are named with their type and size so the model knows
// they were there, and a resource link names the tool that reads it
// (readTool, when the server offers resources). Structured content stands
// in when there is no content.
func resultText(res *sdk.CallToolResult, limit int, readTool string, keep keeper) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, imageLine(c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes%s]", c.MIMEType, len(c.Data), keep.kept(c.Data)))
		case *sdk.ResourceLink:
			line := fmt.Sprintf("[resource link %s %s]", c.URI, c.Name)
			if readTool != "" {
				line = fmt.Sprintf("[resource link %s %s; read it with %s]", c.URI, c.Name, readTool)
			}
			parts = append(parts, line)
		case *sdk.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Text != "":
				parts = append(parts, r.Text)
			case isImageBlob(r):
				parts = append(parts, imageLine(r.MIMEType, len(r.Blob)))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes%s]", r.URI, r.MIMEType, len(r.Blob), keep.kept(r.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return text.Truncate(strings.Join(parts, "\n"), limit, text.MoreBytes)
}
