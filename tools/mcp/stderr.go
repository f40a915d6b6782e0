package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"

	"github.com/toolround/toolround/internal/text"
)

const (
	maxLogLine = 4 << 10
	// tailLines and maxTailLine bound the stderr quoted in a start failure.
	tailLines   = 5
	maxTailLine = 300
)

// stderrLog writes a stdio server's stderr to the logger at debug level,
// one record a line, and keeps the last lines: a server that fails to start
// usually says why there.
type stderrLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	buf  []byte
	tail []string
}

// Tail returns the last lines written, joined with " | ".
func (w *stderrLog) Tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, " | ")
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLogLine {
		w.emit(w.buf)
		w.buf = nil
	}
	return len(p), nil
}

func (w *stderrLog) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) > maxLogLine {
		line = line[:maxLogLine]
	}
	if len(line) == 0 {
		return
	}
	w.log.Debug("mcp: server stderr", "line", string(line))
	short := string(line)
	if len(short) > maxTailLine {
		short = strings.ToValidUTF8(text.Cut(short, maxTailLine), "") + "..."
	}
	w.tail = append(w.tail, short)
	if len(w.tail) > tailLines {
		w.tail = w.tail[1:]
	}
}
