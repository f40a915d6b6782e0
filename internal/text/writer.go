package text

import (
	"errors"
	"fmt"
)

// ErrFull is what a strict Writer (NewStrictWriter) returns for a write that
// would go past its limit.
var ErrFull = errors.New("text: output limit reached")

// Writer is an io.Writer that keeps a bounded part of what is written to it
// and counts the rest, so that output of any size takes bounded memory.
// Make one with NewWriter (the first bytes), NewHeadTailWriter (the first
// and the last bytes) or NewStrictWriter (all or an error). It is not safe
// for concurrent use.
type Writer struct {
	headCap, tailCap int
	strict           bool
	head             []byte
	tail             []byte // the last tailCap bytes, at the end of a buffer of up to 2*tailCap
	total            int64
}

// NewWriter keeps the first limit bytes and counts the rest.
func NewWriter(limit int) *Writer { return &Writer{headCap: max(limit, 0)} }

// NewHeadTailWriter keeps the first limit/2 and the last limit-limit/2 bytes
// and counts what lies between.
func NewHeadTailWriter(limit int) *Writer {
	limit = max(limit, 0)
	return &Writer{headCap: limit / 2, tailCap: limit - limit/2}
}

// NewStrictWriter keeps everything up to limit bytes; a write that would go
// past it keeps nothing of that write and fails with ErrFull.
func NewStrictWriter(limit int) *Writer { return &Writer{headCap: max(limit, 0), strict: true} }

// Write never fails, except past the limit of a strict Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.strict && len(w.head)+len(p) > w.headCap {
		return 0, ErrFull
	}
	n := len(p)
	w.total += int64(n)
	if take := min(w.headCap-len(w.head), len(p)); take > 0 {
		w.head = append(w.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 || w.tailCap == 0 {
		return n, nil
	}
	if len(p) >= w.tailCap {
		w.tail = append(w.tail[:0], p[len(p)-w.tailCap:]...)
		return n, nil
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*w.tailCap {
		// Compacting only when the buffer doubles keeps writes amortised O(len(p)).
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.tailCap:]...)
	}
	return n, nil
}

// Total is how many bytes were written, kept or not.
func (w *Writer) Total() int64 { return w.total }

// Truncated reports whether some bytes written were not kept.
func (w *Writer) Truncated() bool { return w.total > int64(len(w.head)+len(w.Tail())) }

// Head is the first bytes kept; all of them for NewWriter and NewStrictWriter.
func (w *Writer) Head() []byte { return w.head }

// Tail is the last bytes kept by a NewHeadTailWriter (those not in Head).
func (w *Writer) Tail() []byte {
	if len(w.tail) > w.tailCap {
		return w.tail[len(w.tail)-w.tailCap:]
	}
	return w.tail
}

// String is what was kept. When bytes were left out, characters cut at the
// edges are dropped and a marker says how many bytes are missing: after the
// head, "\n[output truncated: N more bytes]" (MoreBytes); between head and
// tail, "\n... N bytes omitted ...\n".
func (w *Writer) String() string {
	tail := w.Tail()
	if !w.Truncated() {
		return string(w.head) + string(tail)
	}
	head := TrimPartialRune(w.head)
	if w.tailCap == 0 {
		return fmt.Sprintf("%s%s", head, MoreBytes(int(w.total-int64(len(head)))))
	}
	tail = TrimPartialRuneStart(tail)
	return headTail(head, tail, w.total-int64(len(head))-int64(len(tail)))
}
