package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/toolround/toolround/tools"
)

type findArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (t *fileTools) findFilesDef() tools.Definition {
	return tools.Definition{
		Name: "find_files",
		Description: "Find files and folders in the workdir by glob pattern: '*' and '?' match within a name, " +
			"'**' matches any number of folders, '{a,b}' either. A pattern without '/' matches names at any " +
			"depth ('*.go' finds every Go file); a pattern with '/' matches the whole path below the search " +
			"folder ('src/**/*_test.go'). Results are workdir paths, folders end with '/'. The .git folder is " +
			fmt.Sprintf("skipped. At most %d results.", t.cfg.MaxFindResults),
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. '*.md' or 'cmd/**/main.go'."},
				"path": {"type": "string", "description": "Folder to search, relative to the workdir. Default: the whole workdir."}
			},
			"required": ["pattern"],
			"additionalProperties": false
		}`),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Volatile:   true,
		Timeout:    time.Minute,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(t.findFiles),
	}
}

func (t *fileTools) findFiles(ctx context.Context, req tools.Request, a findArgs) (tools.Result, error) {
	pattern, err := t.cleanPattern(a.Pattern)
	if err != nil {
		return tools.Result{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	tg, err := t.resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	fi, err := t.wd.Root().Stat(tg.real)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, plainErr(err))
	}
	if !fi.IsDir() {
		return tools.Result{}, fmt.Errorf("%s is a file, not a folder; give the folder to search as path", tg.given)
	}
	byName := !strings.Contains(pattern, "/")
	var found []string
	total, unreadable, walked := 0, 0, 0
	err = fs.WalkDir(t.wd.Root().FS(), tg.real, func(p string, d fs.DirEntry, err error) error {
		if walked++; walked%1024 == 0 {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
		}
		if err != nil {
			if p == tg.real {
				return err
			}
			unreadable++
			return nil // WalkDir skips the folder it could not read
		}
		if p == tg.real {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || p == tools.ReservedDir) {
			return fs.SkipDir
		}
		subject := d.Name()
		if !byName {
			subject = strings.TrimPrefix(p, tg.real+"/")
			if tg.real == "." {
				subject = p
			}
		}
		if ok, _ := doublestar.Match(pattern, subject); !ok {
			return nil
		}
		total++
		if len(found) < t.cfg.MaxFindResults {
			shown := t.shownPath(tg, p)
			if d.IsDir() {
				shown += "/"
			}
			found = append(found, shown)
		}
		return nil
	})
	if err != nil {
		return tools.Result{}, plainErr(err)
	}
	where := "the workdir"
	if tg.given != "." {
		where = tg.given
	}
	var b strings.Builder
	switch total {
	case 0:
		fmt.Fprintf(&b, "find_files: nothing in %s matches %q", where, a.Pattern)
	case 1:
		fmt.Fprintf(&b, "find_files: 1 match for %q in %s", a.Pattern, where)
	default:
		fmt.Fprintf(&b, "find_files: %d matches for %q in %s", total, a.Pattern, where)
	}
	for _, f := range found {
		b.WriteString("\n" + f)
	}
	if total > len(found) {
		fmt.Fprintf(&b, "\n[%d more matches not shown (limit %d); narrow the pattern or the path]", total-len(found), t.cfg.MaxFindResults)
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "\n[%d folders could not be read and were skipped]", unreadable)
	}
	return tools.Text(b.String()), nil
}

// cleanPattern checks a glob and makes it relative to the search folder.
func (t *fileTools) cleanPattern(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("pattern is empty: give a glob such as '*.go' or 'docs/**/*.md'")
	}
	p = filepath.ToSlash(p)
	if path.IsAbs(p) {
		dir := filepath.ToSlash(t.wd.Dir())
		rest, ok := strings.CutPrefix(p, dir+"/")
		if !ok {
			return "", fmt.Errorf("pattern %q is an absolute path outside the workdir; patterns are relative to the search folder", p)
		}
		p = rest
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	p = strings.TrimRight(p, "/")
	if p == "" || p == "." {
		return "", errors.New("pattern names the search folder itself; give a glob such as '*' or '**/*.md'")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("pattern %q leaves the search folder; use path to choose the folder", p)
		}
	}
	if !doublestar.ValidatePattern(p) {
		return "", fmt.Errorf("pattern %q is not a valid glob (check its brackets and braces)", p)
	}
	return p, nil
}

// shownPath is the workdir path of a match, through the link when the
// search folder was given as a symbolic link.
func (t *fileTools) shownPath(tg target, p string) string {
	if tg.given == tg.real {
		return p
	}
	rest := strings.TrimPrefix(p, tg.real+"/")
	if tg.real == "." {
		rest = p
	}
	return joinRel(tg.given, rest)
}
