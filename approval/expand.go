package approval

import (
	"path"
	"strings"
)

// Words the shell expands (T4). A glob, a bracket expression, a brace list
// or a tilde becomes names the script does not show, so such a word is
// checked as every name it could become: it is refused when one of those
// could be a key or credentials file (SensitivePath), a path in a .git
// folder, or a file of a git directory (gitDirFile). The check is lexical,
// over the word's text: `cat src/*.go` is refused because it could be
// src/secrets.go, whatever the workdir holds.

// maxBraceWords bounds the words a brace list may become before the word is
// taken as any name.
const maxBraceWords = 256

// maxExpandingBytes bounds the text an expanding word and its brace words
// may have before the word is taken as any name.
const maxExpandingBytes = 4096

// gitDirFiles are the files of a git directory that name programs or make a
// folder a repository (lower case): writing one makes a later `git` run what
// it says. HEAD is among them except as an argument of git, where it is a
// revision.
var gitDirFiles = []string{"config", "config.worktree", "commondir", "gitdir", "head"}

// gitHooks are the hook names git runs from a hooks folder.
var gitHooks = setOf("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change")

// gitDirFile reports whether the literal path p names a file of a git
// directory that can make git run a program: config, config.worktree,
// commondir, gitdir or HEAD (head false: not HEAD) as the last element, in
// any letter case, a folder named hooks, or a hook inside one. Any folder
// may be a git directory (`git init --bare gd`), so the folder's name does
// not matter.
func gitDirFile(p string, head bool) bool {
	c := path.Clean("/" + strings.ToLower(p))
	segs := strings.Split(strings.TrimPrefix(c, "/"), "/")
	last := segs[len(segs)-1]
	for _, f := range gitDirFiles {
		if last == f && (head || f != "head") {
			return true
		}
	}
	for i, s := range segs {
		if s == "hooks" && (i == len(segs)-1 || gitHooks[segs[i+1]]) {
			return true
		}
	}
	return false
}

// expandedMayBeGuarded reports whether a word the shell expands, given as
// its pattern text (word.pat), could become a name that SensitivePath,
// inGitDir or gitDirFile refuse. head is as for gitDirFile.
func expandedMayBeGuarded(pat string, head bool) bool {
	if len(pat) > maxExpandingBytes {
		return true
	}
	alts, ok := braceExpand(pat, maxBraceWords)
	if !ok {
		return true
	}
	total := 0
	for _, a := range alts {
		total += len(a)
	}
	if total > maxExpandingBytes {
		return true // taken as any name: the check stays cheap
	}
	for _, a := range alts {
		if strings.HasPrefix(a, "~") {
			// ~ and ~/x are the home folder; ~user, ~+ and ~- are others.
			switch {
			case a == "~":
				continue
			case strings.HasPrefix(a, "~/"):
				a = a[2:]
			default:
				return true
			}
		}
		if globMayBeGuarded(strings.ToLower(a), head) {
			return true
		}
	}
	return false
}

func globMayBeGuarded(pat string, head bool) bool {
	var comps [][]gtok
	for _, c := range strings.Split(pat, "/") {
		if c == "" || c == "." {
			continue
		}
		comps = append(comps, globTokens(c))
	}
	if len(comps) == 0 {
		return false
	}
	git := globTokens(".git")
	hooks := globTokens("hooks")
	for i, c := range comps {
		if intersects(c, git) {
			return true
		}
		for _, d := range sensitiveDirs {
			parts := strings.Split(d, "/")
			if i+len(parts) > len(comps) {
				continue
			}
			all := true
			for k, p := range parts {
				if !intersects(comps[i+k], globTokens(p)) {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		if intersects(c, hooks) {
			if i == len(comps)-1 {
				return true
			}
			for h := range gitHooks {
				if intersects(comps[i+1], globTokens(h)) {
					return true
				}
			}
		}
	}
	last := comps[len(comps)-1]
	for _, n := range sensitiveNames {
		if intersects(last, globTokens(n)) {
			return true
		}
	}
	for _, f := range gitDirFiles {
		if (head || f != "head") && intersects(last, globTokens(f)) {
			return true
		}
	}
	return false
}

// braceExpand expands brace lists the way bash does ({a,b} becomes a and
// b); a sequence ({1..9}, {a..z}) becomes `*`. pat keeps the backslashes of
// quoted characters (word.pat), which are never taken for braces. ok is
// false when there would be more than limit words.
func braceExpand(pat string, limit int) ([]string, bool) {
	out := []string{}
	var rec func(s string) bool
	rec = func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] != '{' {
				continue
			}
			j, commas := braceClose(s, i)
			if j < 0 {
				continue
			}
			inner := s[i+1 : j]
			if len(commas) == 0 {
				if strings.Contains(inner, "..") {
					return rec(s[:i] + "*" + s[j+1:])
				}
				continue
			}
			start := i + 1
			for _, c := range append(commas, j) {
				if !rec(s[:i] + s[start:c] + s[j+1:]) {
					return false
				}
				start = c + 1
			}
			return true
		}
		out = append(out, s)
		return len(out) <= limit
	}
	if !rec(pat) {
		return nil, false
	}
	return out, true
}

// braceClose finds the '}' that closes the '{' at i and the top-level commas
// between them; -1 when there is none.
func braceClose(s string, i int) (int, []int) {
	depth := 0
	var commas []int
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, j)
			}
		}
	}
	return -1, nil
}

// gtok is one element of a glob: a literal rune, any one rune, a run of
// any runes, or a bracket expression.
type gtok struct {
	kind   byte // 'l' literal, '?' any rune, '*' any run, '[' class
	r      rune
	neg    bool
	ranges [][2]rune
}

// globTokens reads a shell glob (backslash escapes the next character;
// `[...]`, `[!...]` and `[^...]` are classes; a character class name such as
// [:alpha:] is taken for any character; an unterminated `[` is literal).
func globTokens(p string) []gtok {
	rs := []rune(p)
	var out []gtok
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			out = append(out, gtok{kind: 'l', r: rs[i]})
		case '?':
			out = append(out, gtok{kind: '?'})
		case '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, gtok{kind: '*'})
			}
		case '[':
			t, n, ok := classToken(rs[i:])
			if !ok {
				out = append(out, gtok{kind: 'l', r: '['})
				continue
			}
			out = append(out, t)
			i += n - 1
		default:
			out = append(out, gtok{kind: 'l', r: c})
		}
	}
	return out
}

// classToken reads a bracket expression at the start of rs; n is its length.
func classToken(rs []rune) (gtok, int, bool) {
	t := gtok{kind: '['}
	i := 1
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		t.neg = true
		i++
	}
	first := true
	for ; i < len(rs); i++ {
		c := rs[i]
		if c == ']' && !first {
			return t, i + 1, true
		}
		first = false
		if c == '[' && i+1 < len(rs) && (rs[i+1] == ':' || rs[i+1] == '=' || rs[i+1] == '.') {
			// [:alpha:] and the like: any character.
			return gtok{kind: '?'}, classEnd(rs), classEnd(rs) > 0
		}
		if c == '\\' && i+1 < len(rs) {
			i++
			c = rs[i]
		}
		lo, hi := c, c
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			i += 2
			if hi < lo {
				// A range read in another collation: any character.
				lo, hi = 0, 0x10ffff
			}
		}
		t.ranges = append(t.ranges, [2]rune{lo, hi})
	}
	return gtok{}, 0, false
}

// classEnd is the length of a bracket expression with character classes in
// it: up to the first "]" after the last ":]", "=]" or ".]".
func classEnd(rs []rune) int {
	s := string(rs)
	last := 0
	for _, m := range []string{":]", "=]", ".]"} {
		if k := strings.LastIndex(s, m); k >= 0 && k+2 > last {
			last = k + 2
		}
	}
	if k := strings.IndexRune(s[last:], ']'); k >= 0 {
		return len([]rune(s[:last+k+1]))
	}
	return 0
}

func (t gtok) has(r rune) bool {
	switch t.kind {
	case 'l':
		return t.r == r
	case '?', '*':
		return true
	}
	in := false
	for _, rg := range t.ranges {
		if r >= rg[0] && r <= rg[1] {
			in = true
			break
		}
	}
	return in != t.neg
}

// oneIntersects reports whether two one-rune tokens share a rune.
func oneIntersects(a, b gtok) bool {
	if a.kind == 'l' {
		return b.has(a.r)
	}
	if b.kind == 'l' {
		return a.has(b.r)
	}
	if a.kind == '?' || b.kind == '?' {
		return true
	}
	// Two classes: try every bound of either, and the ASCII range.
	for _, t := range []gtok{a, b} {
		for _, rg := range t.ranges {
			for _, r := range []rune{rg[0], rg[1], rg[0] + 1, rg[1] - 1} {
				if a.has(r) && b.has(r) {
					return true
				}
			}
		}
	}
	for r := rune(0); r < 0x100; r++ {
		if a.has(r) && b.has(r) {
			return true
		}
	}
	return false
}

// intersects reports whether some string matches both globs.
func intersects(a, b []gtok) bool {
	memo := make([][]int8, len(a)+1)
	for i := range memo {
		memo[i] = make([]int8, len(b)+1)
	}
	var f func(i, j int) bool
	f = func(i, j int) bool {
		if memo[i][j] != 0 {
			return memo[i][j] > 0
		}
		memo[i][j] = -1
		ok := false
		switch {
		case i == len(a) && j == len(b):
			ok = true
		case i < len(a) && a[i].kind == '*' && f(i+1, j):
			ok = true
		case j < len(b) && b[j].kind == '*' && f(i, j+1):
			ok = true
		case i < len(a) && j < len(b) && a[i].kind == '*':
			ok = f(i, j+1) // the star takes whatever b[j] is
		case i < len(a) && j < len(b) && b[j].kind == '*':
			ok = f(i+1, j)
		case i < len(a) && j < len(b):
			ok = oneIntersects(a[i], b[j]) && f(i+1, j+1)
		}
		if ok {
			memo[i][j] = 1
		}
		return ok
	}
	return f(0, 0)
}
