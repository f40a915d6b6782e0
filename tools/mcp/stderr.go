package mcp

import (
	"bytes"
	"log/slog"
	"sync"
)

const maxLogLine = 4 << 10

// stderrLog writes a stdio server's stderr to the logger, one record a line,
// so that a server's complaints about its own configuration are visible.
type stderrLog struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
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
	if len(line) > 0 {
		w.log.Info("mcp: server stderr", "line", string(line))
	}
}
