package round

import (
	"fmt"

	"github.com/toolround/toolround/internal/text"
)

// A result too large for workflow history or for the round's result is kept
// in the blob store; what stays is a preview and a note naming the
// reference (ContentRef), which clients resolve.

// StoredPreview is what stays of a content kept in the blob store: its first
// bytes and a note naming the reference.
func StoredPreview(content, ref string, preview int) string {
	return PreviewOf(content, preview) + fmt.Sprintf("\n[%d bytes in all; stored as %s]", len(content), ref)
}

// PreviewOf cuts s to at most n bytes at a character boundary (text.Cut,
// for the packages outside this module).
func PreviewOf(s string, n int) string { return text.Cut(s, n) }

// eventPreview is how much of a result its tool_result event shows.
const eventPreview = 200

// ResultPreview is the detail of a result's tool_result event: the content
// cut to eventPreview bytes, with "..." when it was cut.
func ResultPreview(content string) string {
	if len(content) <= eventPreview {
		return content
	}
	return text.Cut(content, eventPreview) + "..."
}
