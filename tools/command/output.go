package command

import (
	"fmt"
	"unicode/utf8"
)

// capBuffer keeps the first and the last bytes written to it, up to limit in
// all, and counts the rest, so that output of any size takes bounded memory.
type capBuffer struct {
	headCap, tailCap int
	head             []byte
	ring             []byte // the last tailCap bytes once full; pos is the oldest
	pos              int
	full             bool
	total            int64
}

func newCapBuffer(limit int) *capBuffer {
	h := limit / 2
	return &capBuffer{headCap: h, tailCap: limit - h}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if len(b.head) < b.headCap {
		take := min(b.headCap-len(b.head), len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 || b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		if cap(b.ring) < b.tailCap {
			b.ring = make([]byte, b.tailCap)
		}
		b.ring = b.ring[:b.tailCap]
		copy(b.ring, p[len(p)-b.tailCap:])
		b.pos, b.full = 0, true
		return n, nil
	}
	if !b.full {
		room := b.tailCap - len(b.ring)
		if len(p) <= room {
			b.ring = append(b.ring, p...)
			b.full = len(b.ring) == b.tailCap
			return n, nil
		}
		b.ring = append(b.ring, p[:room]...)
		p = p[room:]
		b.full = true
	}
	for len(p) > 0 {
		c := copy(b.ring[b.pos:], p)
		p = p[c:]
		b.pos = (b.pos + c) % b.tailCap
	}
	return n, nil
}

func (b *capBuffer) tail() []byte {
	if !b.full {
		return b.ring
	}
	out := make([]byte, 0, b.tailCap)
	out = append(out, b.ring[b.pos:]...)
	return append(out, b.ring[:b.pos]...)
}

// String is the kept output, with a marker where bytes were left out.
func (b *capBuffer) String() string {
	head, tail := b.head, b.tail()
	if b.total == int64(len(head)+len(tail)) {
		return string(head) + string(tail)
	}
	head, tail = trimRuneEnd(head), trimRuneStart(tail)
	omitted := b.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n... %d bytes omitted ...\n%s", head, omitted, tail)
}

// section renders the output for a result.
func (b *capBuffer) section() string {
	switch {
	case b.total == 0:
		return "no output"
	case b.total <= int64(b.headCap+b.tailCap):
		return fmt.Sprintf("output (%d bytes, stdout and stderr combined):\n%s", b.total, b.String())
	default:
		return fmt.Sprintf("output (%d bytes, stdout and stderr combined; only the first %d and the last %d are shown):\n%s",
			b.total, len(b.head), len(b.tail()), b.String())
	}
}

// trimRuneEnd drops an incomplete UTF-8 sequence cut at the end of b.
func trimRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// trimRuneStart drops the continuation bytes of a sequence cut at the start of b.
func trimRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b // not text; nothing to repair
}
