package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

// maxReadPaths bounds the paths of one read_files call.
const maxReadPaths = 100

// minSection is the least output budget worth starting another path with.
const minSection = 64

// sniffBytes is how much of a file decides whether it is text.
const sniffBytes = 8000

type readArgs struct {
	Paths  []string `json:"paths"`
	Offset int      `json:"offset"`
	Limit  int      `json:"limit"`
}

func (t *fileTools) readFilesDef() tools.Definition {
	return tools.Definition{
		Name: "read_files",
		Description: "Read text files of the workdir. Each file comes under a header '==> path <==' with numbered " +
			"lines ('     7<TAB>text'; the numbers are not part of the file). A folder path lists its entries. " +
			"Binary files are reported with their type and size, not shown. offset and limit select lines " +
			fmt.Sprintf("for every file. At most %d bytes are shown per file and %d per call; the header says where ",
				t.cfg.MaxFileBytes, t.cfg.MaxReadBytes) +
			"a cut file continues. Paths that fail are reported without losing the others.",
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"paths": {"type": "array", "minItems": 1, "maxItems": ` + strconv.Itoa(maxReadPaths) + `, "items": {"type": "string", "minLength": 1},
					"description": "File or folder paths relative to the workdir."},
				"offset": {"type": "integer", "minimum": 1, "description": "First line to show, counting from 1. Default 1."},
				"limit": {"type": "integer", "minimum": 1, "description": "How many lines to show from offset. Default: as many as the size limit allows."}
			},
			"required": ["paths"],
			"additionalProperties": false
		}`),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Timeout:    time.Minute,
		Source:     tools.SourceBuiltin,
		Sensitive:  sensitiveRead,
		Rules:      approval.KindPath,
		ReadsPaths: true,
		Handler:    tools.Typed(t.readFiles),
		Changed:    t.changed,
	}
}

// sensitiveRead reports read_files calls that name a sensitive path; odd
// arguments are left to schema validation.
func sensitiveRead(args json.RawMessage) bool {
	var a struct {
		Paths []any `json:"paths"`
	}
	if json.Unmarshal(args, &a) != nil {
		return false
	}
	for _, p := range a.Paths {
		if s, ok := p.(string); ok && tools.SensitivePath(s) {
			return true
		}
	}
	return false
}

func (t *fileTools) readFiles(ctx context.Context, req tools.Request, a readArgs) (tools.Result, error) {
	switch {
	case len(a.Paths) == 0:
		return tools.Result{}, errors.New("paths is empty: give at least one file or folder path")
	case len(a.Paths) > maxReadPaths:
		return tools.Result{}, fmt.Errorf("%d paths is more than %d; split them over several calls", len(a.Paths), maxReadPaths)
	case a.Offset < 0 || a.Limit < 0:
		return tools.Result{}, errors.New("offset and limit count lines and cannot be negative")
	}
	states := t.fileStates(ctx, a.Paths)
	budget := t.cfg.MaxReadBytes
	var out strings.Builder
	var failures []string
	seen := make(map[string]bool, len(a.Paths))
	for _, p := range a.Paths {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, err
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		if budget < minSection {
			fmt.Fprintf(&out, "==> %s <==\n(not read: this call reached its output limit of %d bytes; read it in another call)", p, t.cfg.MaxReadBytes)
			continue
		}
		section, err := t.readOne(ctx, p, a.Offset, a.Limit, min(budget, t.cfg.MaxFileBytes))
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", p, err))
			fmt.Fprintf(&out, "==> %s <==\nerror: %v", p, err)
			continue
		}
		budget -= len(section)
		out.WriteString(section)
	}
	if len(failures) == len(seen) {
		return tools.Result{}, errors.New(strings.Join(failures, "; "))
	}
	read := make([]string, 0, len(seen))
	for _, p := range a.Paths {
		if rel, err := t.cfg.Workdir.Rel(p); err == nil && !slices.Contains(read, rel) {
			read = append(read, rel)
		}
	}
	return tools.Result{Content: out.String(), Read: read, Files: states}, nil
}

// readOne renders one path: a file's lines, a folder's entries or a note on
// a binary file, in at most budget bytes.
func (t *fileTools) readOne(ctx context.Context, p string, offset, limit, budget int) (string, error) {
	tg, err := t.resolve(p)
	if err != nil {
		return "", unprefix(err, p)
	}
	if tools.SensitivePath(tg.real) && !tools.SensitivePath(tg.given) {
		return "", fmt.Errorf("it is a symbolic link to %s, which may hold keys; read %s by that name so that the read is confirmed", tg.real, tg.real)
	}
	root := t.wd.Root()
	f, err := openRead(root, tg.real)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w; find files with find_files", plainErr(err))
	}
	if err != nil {
		return "", plainErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", plainErr(err)
	}
	if fi.IsDir() {
		return t.listFolder(tg, budget)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", plainErr(err)
	}
	if isBinary(head, len(head) == sniffBytes) {
		return fmt.Sprintf("==> %s (binary file, %s, %d bytes; not shown) <==", p, http.DetectContentType(head), fi.Size()), nil
	}
	if fi.Size() == 0 {
		return fmt.Sprintf("==> %s (empty file) <==", p), nil
	}
	crlf := bytes.Contains(head, []byte("\r\n"))
	if offset < 1 {
		offset = 1
	}
	return renderLines(ctx, br, p, fi.Size(), crlf, offset, limit, budget)
}

// renderLines numbers the lines from offset on, stopping at limit lines or
// at budget bytes of output, and says where to continue.
func renderLines(ctx context.Context, br *bufio.Reader, p string, size int64, crlf bool, offset, limit, budget int) (string, error) {
	lineNo := 0
	for ; lineNo < offset-1; lineNo++ {
		if err := more(ctx, br, lineNo); errors.Is(err, io.EOF) {
			return fmt.Sprintf("==> %s (%d bytes) <==\n(offset %d is past the end: the file has %s)", p, size, offset, plural(lineNo, "line")), nil
		} else if err != nil {
			return "", err
		}
		if _, _, err := readLine(br, 0); err != nil && !errors.Is(err, io.EOF) {
			return "", plainErr(err)
		}
	}
	var body strings.Builder
	var footer string
	shown := 0
	for {
		if err := more(ctx, br, lineNo); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", err
		}
		if limit > 0 && shown == limit {
			footer = fmt.Sprintf("[more lines follow: continue with offset=%d]", lineNo+1)
			break
		}
		lineNo++
		prefix := fmt.Sprintf("%6d\t", lineNo)
		room := budget - body.Len() - len(prefix) - 1
		if room <= 0 {
			footer = fmt.Sprintf("[truncated at the %d-byte limit: continue with offset=%d]", budget, lineNo)
			break
		}
		line, cut, err := readLine(br, room)
		if err != nil && !errors.Is(err, io.EOF) {
			return "", plainErr(err)
		}
		shown++
		body.WriteString(prefix)
		body.Write(line)
		body.WriteByte('\n')
		if cut {
			footer = fmt.Sprintf("[truncated: line %d is longer than the %d-byte limit and only its start is shown; the next line is offset=%d]", lineNo, budget, lineNo+1)
			break
		}
	}
	var s string
	switch {
	case shown == 0 && footer == "":
		return fmt.Sprintf("==> %s (%d bytes) <==\n(offset %d is past the end: the file has %s)", p, size, offset, plural(lineNo, "line")), nil
	case offset == 1 && footer == "":
		s = fmt.Sprintf("==> %s (%d bytes, %s) <==", p, size, plural(shown, "line"))
	case shown == 0:
		s = fmt.Sprintf("==> %s (%d bytes; no lines shown) <==", p, size)
	default:
		s = fmt.Sprintf("==> %s (%d bytes; lines %d-%d shown) <==", p, size, offset, offset+shown-1)
	}
	if crlf {
		s += "\n(the file uses CRLF line endings)"
	}
	if shown > 0 {
		s += "\n" + strings.TrimSuffix(body.String(), "\n")
	}
	if footer != "" {
		s += "\n" + footer
	}
	return s, nil
}

// more reports whether another line follows (io.EOF when not), checking
// for cancellation now and then.
func more(ctx context.Context, br *bufio.Reader, lineNo int) error {
	if lineNo%1024 == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if _, err := br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return plainErr(err)
	}
	return nil
}

// readLine reads one line without its '\n', keeping at most max bytes (cut
// at a character boundary); cut reports that the line was longer. It never
// holds more than max bytes and the reader's buffer, however long the line.
func readLine(br *bufio.Reader, max int) (line []byte, cut bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		full := err == nil
		if full {
			frag = frag[:len(frag)-1]
		}
		if keep := max - len(line); keep > 0 {
			if len(frag) > keep {
				frag, cut = frag[:keep], true
			}
			line = append(line, frag...)
		} else if len(frag) > 0 {
			cut = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if cut {
			line = text.TrimPartialRune(line)
		}
		return line, cut, err
	}
}

// isBinary reports content that is not text: NUL bytes or invalid UTF-8.
// When the sample is a prefix, a character cut at its end is allowed.
func isBinary(b []byte, prefix bool) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if prefix {
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if utf8.Valid(b) {
				return false
			}
			b = b[:len(b)-1]
		}
	}
	return !utf8.Valid(b)
}

// listFolder lists a folder's entries, one per line; the workdir's reserved
// folder is left out.
func (t *fileTools) listFolder(tg target, budget int) (string, error) {
	entries, err := fs.ReadDir(t.wd.Root().FS(), tg.real)
	if err != nil {
		return "", plainErr(err)
	}
	var body strings.Builder
	n, more := 0, 0
	for _, e := range entries {
		if tg.real == "." && e.Name() == tools.ReservedDir {
			continue
		}
		if n == t.cfg.MaxListEntries || body.Len() >= budget {
			more++
			continue
		}
		line := e.Name()
		switch {
		case e.IsDir():
			line += "/"
		case e.Type()&fs.ModeSymlink != 0:
			if to, err := t.wd.Root().Readlink(joinRel(tg.real, e.Name())); err == nil {
				line += " -> " + to
			}
		case e.Type().IsRegular():
			if info, err := e.Info(); err == nil {
				line += fmt.Sprintf(" (%d bytes)", info.Size())
			}
		}
		body.WriteString(line + "\n")
		n++
	}
	name := strings.TrimSuffix(tg.given, "/") + "/"
	if tg.given == "." {
		name = "./"
	}
	s := fmt.Sprintf("==> %s (folder, %s) <==", name, plural(n+more, "entry"))
	if n == 0 {
		return s + "\n(empty folder)", nil
	}
	s += "\n" + strings.TrimSuffix(body.String(), "\n")
	if more > 0 {
		s += fmt.Sprintf("\n[%d more entries not listed; narrow down with find_files]", more)
	}
	return s, nil
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// unprefix drops a leading "p: " that resolve adds, since read_files
// already names the path in its section header.
func unprefix(err error, p string) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, p+": "); ok {
		return errors.New(rest)
	}
	return err
}

// plural is "1 line", "2 lines"; "entry" becomes "entries".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if w, ok := strings.CutSuffix(word, "y"); ok {
		return fmt.Sprintf("%d %sies", n, w)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
