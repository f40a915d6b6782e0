package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

type editArgs struct {
	Path    string  `json:"path"`
	NewText *string `json:"new_text"`
	OldText *string `json:"old_text"`
}

func (t *fileTools) editFileDef() tools.Definition {
	return tools.Definition{
		Name: "edit_file",
		Description: "Create, overwrite or change one text file in the workdir. Without old_text the file " +
			"is written with new_text (parent folders are created). With old_text, that exact text " +
			"(whitespace and line breaks included, no line numbers) must occur exactly once and is " +
			"replaced with new_text. The previous content is kept as a version: file_history lists " +
			"versions, restore_file brings one back.",
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "description": "File path relative to the workdir."},
				"new_text": {"type": "string", "description": "The whole new content, or the text that replaces old_text."},
				"old_text": {"type": "string", "minLength": 1, "description": "Exact text to replace; it must occur exactly once. Omit it to write the whole file."}
			},
			"required": ["path", "new_text"],
			"additionalProperties": false
		}`),
		Concurrent:     false,
		SideEffect:     tools.AtMostOnce,
		Timeout:        time.Minute,
		Source:         tools.SourceBuiltin,
		Subject:        tools.SubjectField("path"),
		Rules:          approval.KindPath,
		Reason:         "it changes {path}",
		TouchesPath:    true,
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(tools.Typed(t.editFile)),
		Reconcile:      t.reconcile,
	}
}

func (t *fileTools) editFile(ctx context.Context, req tools.Request, a editArgs) (tools.Result, error) {
	if a.NewText == nil {
		return tools.Result{}, errors.New("new_text is missing: give the new content (an empty string empties the file)")
	}
	if a.OldText != nil && *a.OldText == "" {
		return tools.Result{}, errors.New("old_text is empty: omit it to write the whole file, or give the exact text to replace")
	}
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	if err := ruleReach(req, a.Path, tg); err != nil {
		return tools.Result{}, err
	}
	if tg.real == "." {
		return tools.Result{}, errors.New("the path names the workdir itself; give a file path")
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	defer t.versions.lock()()
	// The file is read, kept as a version, and replaced through its folder
	// opened here (made below if it does not exist yet), so a symbolic link
	// swapped in meanwhile can redirect none of it.
	dir, err := t.openWorkIfThere(tg.real)
	if err != nil {
		return tools.Result{}, err
	}
	name := path.Base(tg.real)
	mode := fs.FileMode(0o644)
	var cur existing
	if dir != nil {
		defer dir.Close()
		if mode, err = dir.fileMode(name); err != nil {
			return tools.Result{}, err
		}
		if cur, err = t.readForEdit(dir, tg, a.OldText != nil); err != nil {
			return tools.Result{}, err
		}
	}

	var data []byte
	var what string
	line := 0
	switch {
	case a.OldText == nil:
		data = []byte(*a.NewText)
		if cur.loaded && bytes.Equal(cur.data, data) {
			return tools.Text(fmt.Sprintf("edit_file: %s is unchanged: it already holds exactly new_text (%d bytes)", tg.given, len(data))), nil
		}
		if cur.exists {
			what = "overwrote"
		} else {
			what = "created"
		}
	default:
		if !cur.exists {
			return tools.Result{}, fmt.Errorf("%s: no such file; omit old_text to create it, or find the file with find_files", tg.given)
		}
		text, oldText := string(cur.data), *a.OldText
		switch n := strings.Count(text, oldText); {
		case n == 0:
			return tools.Result{}, fmt.Errorf("old_text was not found in %s%s; read the file again with read_files and copy the text exactly", tg.given, notFoundHint(text, oldText))
		case n > 1:
			return tools.Result{}, fmt.Errorf("old_text occurs %d times in %s; include more of the surrounding text so that it occurs once", n, tg.given)
		}
		at := strings.Index(text, oldText)
		line = 1 + strings.Count(text[:at], "\n")
		data = []byte(text[:at] + *a.NewText + text[at+len(oldText):])
		what = "replaced"
	}

	if dir == nil {
		if dir, err = t.openWork(tg.real, true); err != nil {
			return tools.Result{}, err
		}
		defer dir.Close()
	}
	src, err := t.wd.Capped(bytes.NewReader(data)) // WORKSPACE_MAX_BYTES (W3)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, err)
	}
	tmp, _, err := dir.writeTemp(src, mode)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, err)
	}
	op := fmt.Sprintf("edit_file (%s)", what)
	v, err := t.record(ctx, dir, tg.real, change{Op: op, SHA256: hashBytes(data)}, dir.replaceStep(tmp, name))
	if err != nil && v.N == 0 {
		_ = dir.remove(tmp)
		return tools.Result{}, err
	}

	var b strings.Builder
	switch what {
	case "created":
		fmt.Fprintf(&b, "edit_file: created %s (%d bytes, %s)", tg.given, len(data), plural(countLines(data), "line"))
	case "overwrote":
		fmt.Fprintf(&b, "edit_file: overwrote %s (was %d bytes, now %d bytes)", tg.given, cur.size, len(data))
	default:
		fmt.Fprintf(&b, "edit_file: replaced 1 occurrence in %s at line %d (%d lines became %d)",
			tg.given, line, strings.Count(*a.OldText, "\n")+1, strings.Count(*a.NewText, "\n")+1)
	}
	if tg.real != tg.given {
		fmt.Fprintf(&b, " through the symbolic link to %s", tg.real)
	}
	b.WriteString(versionNote(v))
	if what == "replaced" {
		b.WriteString("\n")
		b.WriteString(excerpt(data, line, strings.Count(*a.NewText, "\n")+1))
	}
	if err != nil {
		fmt.Fprintf(&b, "\nwarning: %v", err)
	}
	return tools.Result{Content: b.String(), Touched: tg.touched()}, nil
}

// existing is the state of a file before an edit.
type existing struct {
	exists bool
	size   int64
	// loaded is set when data holds the whole content.
	loaded bool
	data   []byte
}

// readForEdit reads the current content when it is needed: always for a
// replacement, and for an overwrite when it is small enough to compare.
func (t *fileTools) readForEdit(dir *folder, tg target, replace bool) (existing, error) {
	f, err := dir.open(path.Base(tg.real))
	if errors.Is(err, fs.ErrNotExist) {
		return existing{}, nil
	}
	if err != nil {
		return existing{}, fmt.Errorf("%s: %w", tg.given, plainErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return existing{}, fmt.Errorf("%s: %w", tg.given, plainErr(err))
	}
	cur := existing{exists: true, size: fi.Size()}
	if cur.size > t.cfg.MaxEditBytes {
		if replace {
			return cur, fmt.Errorf("%s is %d bytes, more than the %d bytes edit_file changes with old_text; overwrite it whole by omitting old_text", tg.given, cur.size, t.cfg.MaxEditBytes)
		}
		return cur, nil
	}
	if cur.data, err = io.ReadAll(f); err != nil {
		return cur, fmt.Errorf("read %s: %w", tg.given, plainErr(err))
	}
	cur.loaded, cur.size = true, int64(len(cur.data))
	return cur, nil
}

// notFoundHint explains the usual reasons an exact text is not found.
func notFoundHint(text, old string) string {
	switch {
	case strings.Contains(text, "\r\n") && !strings.Contains(old, "\r\n") && strings.Contains(text, strings.ReplaceAll(old, "\n", "\r\n")):
		return " (the file uses CRLF line endings: old_text must use them too)"
	case strings.Contains(text, strings.TrimSpace(old)):
		return " (it occurs with different leading or trailing whitespace)"
	case looksNumbered(old):
		return " (old_text seems to carry the line numbers of read_files; leave them out)"
	}
	return ""
}

// looksNumbered reports whether every line of s starts like a read_files line.
func looksNumbered(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		num, _, ok := strings.Cut(strings.TrimLeft(l, " "), "\t")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
			return false
		}
	}
	return true
}

// versionNote tells where the previous state went.
func versionNote(v Version) string {
	switch {
	case v.N == 0:
		return ""
	case v.Dropped:
		return fmt.Sprintf("; the previous content (%d bytes) was larger than the version size limit, so no copy was kept", v.Size)
	case v.Absent:
		return fmt.Sprintf("; version %d records that the file did not exist (restore_file undoes this)", v.N)
	}
	return fmt.Sprintf("; the previous content is version %d (restore_file brings it back)", v.N)
}

// excerpt shows lines from..from+n-1 of data, numbered, capped to a few lines.
func excerpt(data []byte, from, n int) string {
	const maxLines, maxLine = 10, 200
	lines := strings.Split(string(data), "\n")
	var b strings.Builder
	for i := from; i < from+n && i <= len(lines); i++ {
		if i-from == maxLines {
			fmt.Fprintf(&b, "… %d more changed lines\n", n-maxLines)
			break
		}
		l := lines[i-1]
		if len(l) > maxLine {
			l = text.Cut(l, maxLine) + "…"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i, l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte("\n"))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}
