package approval

import "strings"

// The checks of the tables (tables.go) that read a whole command.

// gitConfigRead accepts the read forms of git-config(1) of git 2.39: one
// action option, with as many operands as it takes. Without one, `git
// config NAME VALUE [VALUE-PATTERN]` writes.
func gitConfigRead(pr *parsed) bool {
	actions := map[string][2]int{"--get": {1, 2}, "--get-all": {1, 2}, "--get-regexp": {1, 2}, "--get-urlmatch": {2, 2}, "-l": {0, 0}}
	n, lim := 0, [2]int{}
	for name, r := range actions {
		if pr.seen[name] > 0 {
			n += pr.seen[name]
			lim = r
		}
	}
	return n == 1 && len(pr.ops) >= lim[0] && len(pr.ops) <= lim[1]
}

// gitCommitMessage: a commit names its message; without, git runs an
// editor.
func gitCommitMessage(pr *parsed) bool {
	return pr.seen["-m"] > 0 || pr.seen["-F"] > 0 || pr.seen["--dry-run"] > 0 || (pr.seen["--amend"] > 0 && pr.seen["--no-edit"] > 0)
}

// createsWithOperands: git branch and git tag with a name and without the
// list option create one (a write form).
func createsWithOperands(list string) func(*parsed) bool {
	return func(pr *parsed) bool {
		if len(pr.ops) > 0 && pr.seen[list] == 0 {
			pr.write = true
		}
		return true
	}
}

// tarCheck: one operation of extract, list and compare; an archive name
// with ':' is a remote archive (tar runs rsh) unless --force-local.
func tarCheck(pr *parsed) bool {
	kinds := 0
	for _, op := range []string{"-x", "-t", "-d"} {
		if pr.seen[op] > 0 {
			kinds++
		}
	}
	if kinds != 1 {
		return false
	}
	if pr.seen["-x"] > 0 {
		pr.write = true
	}
	for _, a := range pr.vals["-f"] {
		if strings.Contains(a, ":") && pr.seen["--force-local"] == 0 {
			return false
		}
	}
	return true
}

// sedCheck: sed -i writes the files it reads, so they are written paths;
// its backup suffix stays in their folder.
func sedCheck(pr *parsed) bool {
	if pr.seen["-i"] == 0 {
		return true
	}
	for _, s := range pr.vals["-i"] {
		if strings.Contains(s, "/") {
			return false
		}
	}
	files := pr.ops
	if !pr.script && len(files) > 0 {
		files = files[1:]
	}
	for _, w := range files {
		if w.expands || !fileTargetOK(w.val) {
			return false
		}
	}
	return len(files) > 0
}

// splitCheck: [INPUT [PREFIX]]; the prefix names the files it writes.
func splitCheck(pr *parsed) bool {
	if len(pr.ops) > 2 {
		return false
	}
	if len(pr.ops) > 0 && !pr.operand(argPath, pr.ops[0]) {
		return false
	}
	return len(pr.ops) < 2 || pr.operand(argOut, word{val: pr.ops[1].val + "aa", expands: pr.ops[1].expands})
}

// uniqCheck: [INPUT [OUTPUT]].
func uniqCheck(pr *parsed) bool {
	if len(pr.ops) > 0 && !pr.operand(argPath, pr.ops[0]) {
		return false
	}
	return len(pr.ops) < 2 || pr.operand(argOut, pr.ops[1])
}

// testCheck refuses test/[ with -v or -R: bash evaluates their subscripts.
func testCheck(pr *parsed) bool {
	return literal(pr.ops) && !hasWord(pr.ops, "-v", "-R")
}

// sedScriptOK reads a GNU sed 4.9 script as its compiler does (compile.c)
// and accepts it only when every command is one that neither runs a
// program nor reads or writes a file it names: not e, r, R, w, W, and no s
// command with the e or w flag. Anything it does not read the way sed
// would asks.
func sedScriptOK(s string) bool {
	p := &sedParser{s: s}
	return p.script()
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }
func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) spaces() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sedParser) script() bool {
	depth := 0
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
			p.i++
		}
		if p.eof() {
			return depth == 0
		}
		if p.peek() == '#' {
			p.toEOL()
			continue
		}
		if !p.address() {
			return false
		}
		if p.peek() == ',' {
			p.i++
			p.spaces()
			if !p.address2() {
				return false
			}
		}
		p.spaces()
		for p.peek() == '!' {
			p.i++
			p.spaces()
		}
		if p.eof() {
			return false
		}
		c := p.s[p.i]
		p.i++
		switch c {
		case '{':
			depth++
			continue
		case '}':
			if depth == 0 {
				return false
			}
			depth--
		case '#':
			p.toEOL()
			continue
		case ':', 'b', 't', 'T', 'v':
			// A label of plain characters, then the end of the command:
			// sed ends a label at a blank or ';' and reads what follows
			// as a command, so nothing after one is skipped.
			p.spaces()
			for !p.eof() && labelChar(p.s[p.i]) {
				p.i++
			}
			p.spaces()
			if !p.eof() && strings.IndexByte(";\n}", p.s[p.i]) < 0 {
				return false
			}
			continue
		case 'a', 'i', 'c':
			if !p.text() {
				return false
			}
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			p.spaces()
			for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
		case 's':
			if !p.subst() {
				return false
			}
		case 'y':
			d, ok := p.delim()
			if !ok || !p.slashed(d, false) || !p.slashed(d, false) {
				return false
			}
		default:
			return false // e, r, R, w, W and anything unknown
		}
		if !p.endOfCommand() {
			return false
		}
	}
}

func labelChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func (p *sedParser) toEOL() {
	for !p.eof() && p.s[p.i] != '\n' {
		p.i++
	}
}

// endOfCommand: what may follow a command that takes no text.
func (p *sedParser) endOfCommand() bool {
	p.spaces()
	if p.eof() {
		return true
	}
	switch p.s[p.i] {
	case ';', '\n', '}', '#':
		return true
	}
	return false
}

// address reads one address, if there is one.
func (p *sedParser) address() bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.digits()
		if p.peek() == '~' {
			p.i++
			p.digits()
		}
	case c == '$':
		p.i++
	case c == '/':
		p.i++
		return p.slashed('/', true) && p.regexFlags()
	case c == '\\':
		p.i++
		d, ok := p.delim()
		return ok && p.slashed(d, true) && p.regexFlags()
	}
	return true
}

func (p *sedParser) address2() bool {
	switch c := p.peek(); {
	case c == '+' || c == '~':
		p.i++
		if p.peek() < '0' || p.peek() > '9' {
			return false
		}
		p.digits()
		return true
	case c >= '0' && c <= '9', c == '$', c == '/', c == '\\':
		return p.address()
	}
	return false
}

func (p *sedParser) digits() {
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
}

func (p *sedParser) regexFlags() bool {
	for p.peek() == 'I' || p.peek() == 'M' {
		p.i++
	}
	return true
}

// delim reads the delimiter of s, y or \cREGEXc: not a newline or a
// backslash.
func (p *sedParser) delim() (byte, bool) {
	if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return 0, false
	}
	d := p.s[p.i]
	p.i++
	return d, true
}

// slashed reads up to the closing delimiter (match_slash): a backslash
// escapes the next character, an unescaped newline is an error.
func (p *sedParser) slashed(d byte, regex bool) bool {
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == d:
			return true
		case c == '\n':
			return false
		case c == '\\':
			if p.eof() {
				return false
			}
			p.i++
		}
	}
	return false
}

// subst reads s/REGEX/REPLACEMENT/FLAGS; the e and w flags refuse it.
func (p *sedParser) subst() bool {
	d, ok := p.delim()
	if !ok || !p.slashed(d, true) || !p.slashed(d, false) {
		return false
	}
	for !p.eof() {
		switch c := p.s[p.i]; {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || (c >= '0' && c <= '9'):
			p.i++
		default:
			return true // e, w and the rest: endOfCommand refuses them
		}
	}
	return true
}

// text reads the text of a, i and c: up to an unescaped newline, a
// backslash-newline continuing it.
func (p *sedParser) text() bool {
	p.spaces()
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		if c == '\\' {
			if p.eof() {
				return true
			}
			p.i++
			continue
		}
		if c == '\n' {
			return true
		}
	}
	return true
}
