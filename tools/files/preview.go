package files

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
)

// Bounds of a preview: PreviewLines lines at most, each cut at
// previewLineMax bytes, read from the first previewReadMax bytes.
const (
	PreviewLines   = 20
	previewLineMax = 400
	previewReadMax = 64 << 10
)

// Preview is what a person deciding on a call that overwrites a file sees
// of the file as it is now (T14): its size and first lines, or only its
// size for a key file.
type Preview struct {
	// Exists is false when there is no file at the path: the call creates it.
	Exists bool  `json:"exists"`
	Size   int64 `json:"size"`
	// KeyFile: the path names keys or credentials (approval.SensitivePath),
	// so no line of it is shown.
	KeyFile bool `json:"key_file,omitempty"`
	// Binary: the first bytes are not text, so no line is shown.
	Binary bool     `json:"binary,omitempty"`
	Lines  []string `json:"lines,omitempty"`
	// More is true when the file goes on after Lines.
	More bool `json:"more,omitempty"`
}

// PreviewFile reads the size and first PreviewLines lines of the file at p
// in wd. The path is checked and its links followed as edit_file does, so a
// path edit_file refuses is refused here with the same error; a folder or
// another kind of file than a regular one is refused too.
func PreviewFile(wd *tools.Workdir, p string) (Preview, error) {
	t := &fileTools{wd: wd}
	tg, err := t.resolve(p)
	if err != nil {
		return Preview{}, err
	}
	if tg.real == "." {
		return Preview{}, errors.New("the path names the workdir itself; give a file path")
	}
	root := wd.Root()
	fi, err := root.Lstat(tg.real)
	if errors.Is(err, fs.ErrNotExist) {
		return Preview{}, nil
	}
	if err != nil {
		return Preview{}, fmt.Errorf("%s: %w", p, plainErr(err))
	}
	if !fi.Mode().IsRegular() {
		return Preview{}, fmt.Errorf("%s is not a regular file", p)
	}
	out := Preview{Exists: true, Size: fi.Size()}
	if approval.SensitivePath(tg.given) || approval.SensitivePath(tg.real) {
		out.KeyFile = true
		return out, nil
	}
	f, err := openRead(root, tg.real)
	if err != nil {
		return Preview{}, fmt.Errorf("%s: %w", p, plainErr(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return Preview{}, fmt.Errorf("%s is not a regular file", p)
	}
	out.Size = st.Size()
	head, err := io.ReadAll(io.LimitReader(f, previewReadMax))
	if err != nil {
		return Preview{}, fmt.Errorf("%s: %w", p, plainErr(err))
	}
	if strings.ContainsRune(string(head), 0) {
		out.Binary = true
		return out, nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(head)))
	sc.Buffer(make([]byte, 0, 4096), previewReadMax+1)
	for sc.Scan() {
		if len(out.Lines) == PreviewLines {
			out.More = true
			break
		}
		out.Lines = append(out.Lines, cutLine(strings.TrimSuffix(sc.Text(), "\r")))
	}
	if !out.More && int64(len(head)) < out.Size {
		out.More = true
	}
	return out, nil
}

// cutLine cuts a line at previewLineMax bytes, on a rune boundary, and
// marks the cut.
func cutLine(s string) string {
	if len(s) <= previewLineMax {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	n := previewLineMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "\uFFFD") + " …"
}
