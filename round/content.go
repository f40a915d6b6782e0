package round

import "fmt"

// A result too large for workflow history or for the round's result is kept
// in the blob store; what stays is a preview and a note naming the
// reference (ContentRef), which clients resolve.

// StoredPreview is what stays of a content kept in the blob store: its first
// bytes and a note naming the reference.
func StoredPreview(content, ref string, preview int) string {
	return PreviewOf(content, preview) + fmt.Sprintf("\n[%d bytes in all; stored as %s]", len(content), ref)
}

// PreviewOf cuts s to at most n bytes at a character boundary.
func PreviewOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// eventPreview is how much of a result its tool_result event shows.
const eventPreview = 200

// ResultPreview is the detail of a result's tool_result event: the content
// cut to eventPreview bytes, with "..." when it was cut.
func ResultPreview(content string) string {
	if len(content) <= eventPreview {
		return content
	}
	return PreviewOf(content, eventPreview) + "..."
}
