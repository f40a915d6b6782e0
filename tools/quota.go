package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// CodeWorkspaceFull is the error_code of a call refused or ended because
// its workspace passed WORKSPACE_MAX_BYTES (W3).
const CodeWorkspaceFull = "workspace_full"

// EnvWorkspaceMaxBytes names the limit's variable.
const EnvWorkspaceMaxBytes = "WORKSPACE_MAX_BYTES"

// codedError is a tool failure with an error_code for the call's result.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// WithCode marks a tool's failure with code, which the call's result
// carries as error_code.
func WithCode(code string, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// ErrorCode is the code WithCode gave err; "" when none.
func ErrorCode(err error) string {
	var c *codedError
	if errors.As(err, &c) {
		return c.code
	}
	return ""
}

// Usage is the size of the workspace's regular files, its versions and
// background output (.toolround) included.
func (w *Workdir) Usage() (int64, error) {
	var n int64
	err := fs.WalkDir(w.root.FS(), ".", func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("workspace usage: %w", err)
	}
	return n, nil
}

// Room is how many bytes the workspace may still take; limited is false
// when it has no limit.
func (w *Workdir) Room() (room int64, limited bool, err error) {
	if w.maxBytes <= 0 {
		return 0, false, nil
	}
	used, err := w.Usage()
	if err != nil {
		return 0, true, err
	}
	return max(0, w.maxBytes-used), true, nil
}

// FullError is the failure of a call that found the workspace over its
// limit, holding used bytes.
func (w *Workdir) FullError(used int64) error {
	return WithCode(CodeWorkspaceFull, fmt.Errorf("the workspace is full: it holds %d bytes and %s is %d; remove files (or old versions with remove_file) to make room", used, EnvWorkspaceMaxBytes, w.maxBytes))
}

// Capped is src, failing with workspace_full once it gives more bytes than
// the workspace has room for; a workspace already at its limit refuses at
// once. A file tool writes through it to a temp file that is renamed into
// place only when the whole content fits.
func (w *Workdir) Capped(src io.Reader) (io.Reader, error) {
	room, limited, err := w.Room()
	if err != nil || !limited {
		return src, err
	}
	if room <= 0 {
		used, _ := w.Usage()
		return nil, w.FullError(used)
	}
	return &cappedReader{r: src, left: room, room: room, w: w}, nil
}

type cappedReader struct {
	r          io.Reader
	left, room int64
	w          *Workdir
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		return 0, WithCode(CodeWorkspaceFull, fmt.Errorf("the write does not fit: it is more than the %d bytes the workspace had left under %s=%d; nothing was written", c.room, EnvWorkspaceMaxBytes, c.w.maxBytes))
	}
	c.left -= int64(n)
	return n, err
}
