// Package docs holds the project's documentation; its test keeps the
// requirement ids that code cites in step with the ids the pages define.
package docs

import (
	"bufio"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// idPattern is what counts as a cited requirement id: P1.1-P3.9 for the
// three passes, and a letter of a requirement family followed by one or two
// digits (D for the decisions after the first version). Only comments and
// string literals are searched, so an identifier or a number in code (a
// variable named like an id, 0xA1) is never taken for one.
var idPattern = regexp.MustCompile(`\b(P[123]\.[0-9]+|[ABCDEFGHKLMNORSTUVWXYZ][0-9]{1,2})\b`)

// A page defines an id with a Markdown heading whose first word is the id
// ("### P1.1 Unwrap", "## T3: deadlines"), or with the id alone in bold
// ("**K2**"). A mention in running text ("see K2") defines nothing.
var (
	headingDef = regexp.MustCompile(`^#{1,6}\s+(P[123]\.[0-9]+|[ABCDEFGHKLMNORSTUVWXYZ][0-9]{1,2})(?:[\s:]|$)`)
	boldDef    = regexp.MustCompile(`\*\*(P[123]\.[0-9]+|[ABCDEFGHKLMNORSTUVWXYZ][0-9]{1,2})\*\*`)
)

// citation is one id found in a Go file.
type citation struct {
	ID   string
	Pos  string // file:line, relative to the scanned root
	Text string // "comment" or "string"
}

// skipDir reports folders whose Go files are not the project's code:
// fixtures, tools installed by the scripts, version control.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || name == "node_modules" ||
		(strings.HasPrefix(name, ".") && name != ".")
}

// scanCitations returns every id cited in the comments and string literals
// of the Go files under root, in file and line order. Folders in skip
// (relative to root) are left out.
func scanCitations(root string, skip ...string) ([]citation, error) {
	var out []citation
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if path != root && (skipDir(d.Name()) || slices.Contains(skip, filepath.ToSlash(rel))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		cs, err := citationsIn(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		out = append(out, cs...)
		return nil
	})
	return out, err
}

// citationsIn tokenizes one Go file and returns the ids in its comments and
// string literals.
func citationsIn(name string, src []byte) ([]citation, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, fset.Base(), len(src))
	var s scanner.Scanner
	var scanErr error
	s.Init(file, src, func(pos token.Position, msg string) {
		if scanErr == nil {
			scanErr = fmt.Errorf("%s: %s", pos, msg)
		}
	}, scanner.ScanComments)
	var out []citation
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		kind := ""
		switch tok {
		case token.COMMENT:
			kind = "comment"
		case token.STRING, token.CHAR:
			kind = "string"
		default:
			continue
		}
		base := fset.Position(pos)
		for _, loc := range idPattern.FindAllStringIndex(lit, -1) {
			if loc[0] > 0 && lit[loc[0]-1] == '%' {
				continue // a percent-encoded byte such as %A9, not a citation
			}
			line := base.Line + strings.Count(lit[:loc[0]], "\n")
			out = append(out, citation{ID: lit[loc[0]:loc[1]], Pos: fmt.Sprintf("%s:%d", name, line), Text: kind})
		}
	}
	return out, scanErr
}

// definedIDs returns the ids defined by the Markdown pages under dir, each
// with the page and line that defines it first.
func definedIDs(dir string) (map[string]string, error) {
	defs := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(dir, path)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			var ids []string
			if m := headingDef.FindStringSubmatch(line); m != nil {
				ids = append(ids, m[1])
			}
			for _, m := range boldDef.FindAllStringSubmatch(line, -1) {
				ids = append(ids, m[1])
			}
			for _, id := range ids {
				if _, ok := defs[id]; !ok {
					defs[id] = fmt.Sprintf("%s:%d", filepath.ToSlash(rel), n)
				}
			}
		}
		return sc.Err()
	})
	return defs, err
}

// undefined returns the citations whose id no page defines.
func undefined(cites []citation, defs map[string]string) []citation {
	var out []citation
	for _, c := range cites {
		if _, ok := defs[c.ID]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// TestCitedIDsAreDefined fails when code cites a requirement id that no page
// under docs/ defines.
func TestCitedIDsAreDefined(t *testing.T) {
	// This package is left out: its test quotes ids as examples.
	cites, err := scanCitations("..", "docs")
	require.NoError(t, err)
	require.NotEmpty(t, cites, "the scanner found no ids at all: is it looking at the repository?")
	defs, err := definedIDs(".")
	require.NoError(t, err)
	var lines []string
	for _, c := range undefined(cites, defs) {
		lines = append(lines, fmt.Sprintf("%s: %s cites %s", c.Pos, c.Text, c.ID))
	}
	require.Empty(t, lines, "ids cited in code but defined nowhere under docs/ (add a heading or a **ID** anchor, or fix the citation):\n%s",
		strings.Join(lines, "\n"))
}

// requirementIDs are the ids of the specification; every one has a
// definition under docs/, whether or not code cites it yet.
var requirementIDs = func() []string {
	ids := []string{}
	for pass, n := range map[int]int{1: 7, 2: 5, 3: 5} {
		for i := 1; i <= n; i++ {
			ids = append(ids, fmt.Sprintf("P%d.%d", pass, i))
		}
	}
	for family, n := range map[string]int{"S": 4, "C": 4, "K": 5, "T": 10, "U": 6, "A": 4, "D": 3, "H": 9, "M": 4, "R": 6, "F": 3, "N": 2, "W": 5} {
		for i := 1; i <= n; i++ {
			ids = append(ids, fmt.Sprintf("%s%d", family, i))
		}
	}
	sort.Strings(ids)
	return ids
}()

func TestEveryRequirementIsDefined(t *testing.T) {
	defs, err := definedIDs(".")
	require.NoError(t, err)
	var missing []string
	for _, id := range requirementIDs {
		if _, ok := defs[id]; !ok {
			missing = append(missing, id)
		}
	}
	require.Empty(t, missing, "requirements without a definition under docs/")
}

// TestScanner runs the scanner over a fixture: a page that defines a few ids
// and a Go file that cites them, cites one the page does not define, and
// holds look-alikes that are not citations.
func TestScanner(t *testing.T) {
	root := filepath.Join("testdata", "ids")
	cites, err := scanCitations(root)
	require.NoError(t, err)
	var got []string
	for _, c := range cites {
		got = append(got, c.ID+" "+c.Pos+" "+c.Text)
	}
	require.Equal(t, []string{
		"P1.1 cite.go:3 comment",
		"K2 cite.go:6 comment",
		"P1.7 cite.go:7 comment",
		"T11 cite.go:13 string",
		"C4 cite.go:17 comment",
	}, got)

	defs, err := definedIDs(root)
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"P1.1": "pages/rules.md:3",
		"P1.7": "pages/rules.md:5",
		"K2":   "pages/rules.md:9",
		"C4":   "pages/rules.md:10",
	}, defs, "headings and bold anchors define; mentions, P1.10 and bold phrases do not")

	bad := undefined(cites, defs)
	require.Len(t, bad, 1)
	require.Equal(t, citation{ID: "T11", Pos: "cite.go:13", Text: "string"}, bad[0])
}

// TestLinks checks that the pages' relative links reach a file and, when they
// name a heading, a heading of that page (GitHub's anchors: lower case, spaces
// to hyphens, other punctuation dropped).
func TestLinks(t *testing.T) {
	pages := map[string][]string{} // page -> its anchors
	var order []string
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		order = append(order, path)
		for _, line := range strings.Split(withoutFences(string(src)), "\n") {
			if m := heading.FindStringSubmatch(line); m != nil {
				pages[filepath.Clean(path)] = append(pages[filepath.Clean(path)], anchor(m[1]))
			}
		}
		return nil
	}))
	require.NotEmpty(t, order)
	var bad []string
	for _, page := range order {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(withoutFences(string(src)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := filepath.Clean(page)
			if file != "" {
				dest = filepath.Clean(filepath.Join(filepath.Dir(page), file))
				if _, err := os.Stat(dest); err != nil {
					bad = append(bad, page+": "+target+": no such file")
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && filepath.IsLocal(dest) && !slices.Contains(pages[dest], frag) {
				bad = append(bad, page+": "+target+": no such heading")
			}
		}
	}
	require.Empty(t, bad)
}

var (
	heading = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*$`)
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

func withoutFences(s string) string {
	return fence.ReplaceAllStringFunc(s, func(f string) string {
		return strings.Repeat("\n", strings.Count(f, "\n"))
	})
}

// anchor is the fragment GitHub gives a heading.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
