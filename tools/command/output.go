package command

import (
	"fmt"

	"github.com/toolround/toolround/internal/text"
)

// capBuffer keeps the first and the last bytes written to it, up to limit in
// all, and counts the rest, so that output of any size takes bounded memory.
type capBuffer struct {
	*text.Writer
	limit int
}

func newCapBuffer(limit int) *capBuffer {
	return &capBuffer{Writer: text.NewHeadTailWriter(limit), limit: limit}
}

// section renders the output for a result.
func (b *capBuffer) section() string {
	switch total := b.Total(); {
	case total == 0:
		return "no output"
	case total <= int64(b.limit):
		return fmt.Sprintf("output (%d bytes, stdout and stderr combined):\n%s", total, b.String())
	default:
		return fmt.Sprintf("output (%d bytes, stdout and stderr combined; only the first %d and the last %d are shown):\n%s",
			total, len(b.Head()), len(b.Tail()), b.String())
	}
}
