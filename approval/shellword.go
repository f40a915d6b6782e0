package approval

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The words of shell patterns and of the scripts they are matched against.

// cmdPattern is a parsed shell pattern: literal words, globs after the first.
type cmdPattern struct {
	words []string
	rule  int // index of the rule it came from
}

// parseCommandPattern reads a pattern as one simple command of literal words.
func parseCommandPattern(p string) (cmdPattern, error) {
	if strings.TrimSpace(p) == "" {
		return cmdPattern{}, errors.New("the pattern is empty")
	}
	if len(p) > maxScriptBytes {
		return cmdPattern{}, errors.New("the pattern is too long")
	}
	if !plainText(p) {
		return cmdPattern{}, errors.New("the pattern has control characters")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(p), "")
	if err != nil {
		return cmdPattern{}, fmt.Errorf("the pattern does not parse as a command: %v", err)
	}
	if len(f.Stmts) != 1 {
		return cmdPattern{}, errors.New("the pattern must be one command, such as `git *` (no ;, &&, | or newlines)")
	}
	s := f.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || s.Negated || s.Background || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return cmdPattern{}, errors.New("the pattern must be one simple command of words, such as `git *`")
	}
	var out cmdPattern
	for _, w := range call.Args {
		v, ok := evalWord(w)
		if !ok {
			return cmdPattern{}, errors.New("the pattern's words must be literal (no $, no substitutions)")
		}
		out.words = append(out.words, v.val)
	}
	name := out.words[0]
	if name == "" || strings.ContainsAny(name, "*?[") {
		return cmdPattern{}, errors.New("the pattern's first word must name a program, without * or ?")
	}
	if opaque[path.Base(name)] || isWrapper(path.Base(name)) {
		return cmdPattern{}, fmt.Errorf("%s runs commands the pattern cannot see; approve those commands instead", name)
	}
	if shells[path.Base(name)] && strings.ContainsAny(p, "*?") {
		return cmdPattern{}, fmt.Errorf("a pattern for %s must name the script exactly: with * it would approve any script", name)
	}
	if shells[path.Base(name)] {
		if len(out.words) < 2 || strings.HasPrefix(out.words[1], "-") || strings.HasPrefix(out.words[1], "+") || isStdinName(out.words[1]) {
			return cmdPattern{}, fmt.Errorf("a pattern for %s must name a script file, such as `%s build.sh`: without one the shell runs what it reads", name, name)
		}
	}
	return out, nil
}

// match reports whether the pattern covers one simple command.
func (p cmdPattern) match(ws []word) bool {
	if len(ws) == 0 || len(p.words) == 0 || ws[0].val != p.words[0] {
		return false
	}
	n := len(p.words)
	for i := 1; i < n; i++ {
		if i == n-1 && p.words[i] == "*" {
			return true
		}
		if i >= len(ws) || ws[i].expands || !globMatch(p.words[i], ws[i].val) {
			return false
		}
	}
	return len(ws) == n
}

// globMatch matches s against p where '*' is any run of characters and '?'
// one character; everything else is literal.
func globMatch(p, s string) bool {
	pr, sr := []rune(p), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(sr) {
		switch {
		case pi < len(pr) && (pr[pi] == '?' || pr[pi] == sr[si]) && pr[pi] != '*':
			pi++
			si++
		case pi < len(pr) && pr[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pr) && pr[pi] == '*' {
		pi++
	}
	return pi == len(pr)
}

// word is the value of a shell word as the shell will see it.
type word struct {
	val string
	// expands: the shell turns the word into file names or other words
	// (an unquoted glob, a leading ~, a brace list).
	expands bool
	// pat is the word as a shell pattern: quoted and escaped characters
	// that a glob, a brace list or a tilde would read are preceded by a
	// backslash (expandedMayBeGuarded).
	pat string
}

// patSpecial are the characters word.pat escapes when they are quoted.
const patSpecial = "*?[]{},~\\"

// evalWord computes a word's value; ok is false when the value depends on
// anything but the script's text (expansions, substitutions) or on which
// shell reads it ($'...').
func evalWord(w *syntax.Word) (word, bool) {
	if w == nil {
		return word{}, false
	}
	var b strings.Builder
	var unquoted strings.Builder // the characters the shell may expand
	var pat strings.Builder
	quoted := func(c byte) {
		if strings.IndexByte(patSpecial, c) >= 0 {
			pat.WriteByte('\\')
		}
		pat.WriteByte(c)
	}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			for j := 0; j < len(v); j++ {
				c := v[j]
				if c == '\\' && j+1 == len(v) {
					// A backslash at the end of the script: bash drops it,
					// dash keeps it.
					return word{}, false
				}
				if c == '\\' {
					j++
					if v[j] == '\n' {
						continue // a line continuation is no character at all
					}
					b.WriteByte(v[j])
					unquoted.WriteByte('_')
					quoted(v[j])
					continue
				}
				b.WriteByte(c)
				unquoted.WriteByte(c)
				pat.WriteByte(c)
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return word{}, false
			}
			b.WriteString(p.Value)
			unquoted.WriteString(strings.Repeat("_", len(p.Value)))
			for j := 0; j < len(p.Value); j++ {
				quoted(p.Value[j])
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return word{}, false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return word{}, false
				}
				v := lit.Value
				for j := 0; j < len(v); j++ {
					if v[j] == '\\' && j+1 < len(v) && strings.IndexByte("$`\"\\\n", v[j+1]) >= 0 {
						j++
						if v[j] == '\n' {
							continue
						}
					}
					b.WriteByte(v[j])
					quoted(v[j])
				}
			}
			unquoted.WriteString("_")
		default:
			return word{}, false
		}
	}
	u := unquoted.String()
	// bash expands ~ at the start, and after = or : even in arguments
	// (a=~ passes a=/root); HEAD~1 stays as it is.
	exp := strings.ContainsAny(u, "*?[") || strings.HasPrefix(u, "~") || strings.Contains(u, "=~") || strings.Contains(u, ":~")
	if i := strings.IndexByte(u, '{'); i >= 0 && (strings.Contains(u[i:], ",") || strings.Contains(u[i:], "..")) {
		exp = true
	}
	return word{val: b.String(), expands: exp, pat: pat.String()}, true
}

// literal reports whether every word is known and expands to itself.
func literal(ws []word) bool {
	for _, w := range ws {
		if w.expands {
			return false
		}
	}
	return true
}

func hasWord(ws []word, vals ...string) bool {
	for _, w := range ws {
		for _, v := range vals {
			if w.val == v {
				return true
			}
		}
	}
	return false
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
