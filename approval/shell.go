package approval

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell patterns (T4). A run_command or background_command pattern is one
// simple command of literal words, such as `git *` or `go test ./...`. It
// approves a script only when the parser can show everything the script
// runs:
//
//   - The script parses as bash (a superset of the sh that runs it); every
//     simple command in it, after unwrapping the wrappers below, matches
//     some pattern: the first words are equal, each further pattern word is
//     a glob over one word (`*` any run of characters, `?` one character),
//     and a final `*` matches any number of remaining words, none included.
//   - Lists (`;`, newline, `&`), `&&`, `||`, pipes, `!`, `( )`, `{ }`, `if`
//     and `while` are walked; every command in them must match.
//   - Nothing is substituted or expanded: no $(...), backquotes, <(...),
//     $((...)), ((...)), `let`, and no parameter expansion ($x, ${x:-...})
//     anywhere, here-documents included. `for`, `case`, `[[ ]]`, functions,
//     `coproc`, `declare`/`export`/`local`, arrays and $'...' / $"..."
//     quoting (sh and bash read those differently) never match.
//   - The word in command position is a literal without glob characters.
//     A word with unquoted `*`, `?`, `[`, a leading `~` (or one after `=`
//     or `:`) or a brace list becomes file names the script does not show:
//     it matches only the pattern's final `*`, never an argument of a
//     program whose arguments are checked (git, find, test, printf, cd,
//     tar, curl, ..., wrappers), and it is checked as every name it could
//     become (expand.go): `cat .en?` and `cat src/*.go` (src/secrets.go)
//     ask, `cp x repo/.gi?/config` asks, `~user` asks. A command name with a `/` outside /bin, /usr/bin and
//     /usr/local/bin (./env, x/sh) is matched as itself: never unwrapped,
//     never a no-op.
//   - Text the parser and sh were seen to read differently never matches:
//     control characters other than tab and newline, and a line with `#`
//     that ends in a backslash (see TestShellsRunOnlyWhatWasApproved).
//   - Redirections stay in the workdir: the target is a literal relative
//     path without `..`, outside any .git folder and not a key or
//     credentials file (SensitivePath), or /dev/null, /dev/stdout,
//     /dev/stderr, /dev/stdin; fd duplications name a number or `-`.
//     Bash's &>, &>>, |& and here-strings (<<<) never match: sh reads them
//     as other commands. `cd` takes one such folder.
//   - No word names a key or credentials file (SensitivePath): reading one
//     always asks a person, whichever tool reads it. No word names a path
//     in a .git folder, nor a file of any git directory (gitDirFile): a
//     last element config, config.worktree, commondir, gitdir or HEAD (not
//     HEAD for git, where it is a revision), a folder named hooks or a hook
//     in one. Any folder can be a git directory (`git init --bare gd`), so
//     `cat x > gd/config` and `cp x gd/hooks/pre-commit` ask: a written
//     config or hook would let a later git run any program.
//   - A program fed its program on stdin never matches: a shell without a
//     script operand, an interpreter (python, node, perl, ruby, ...)
//     without one or with `-` or /dev/stdin, `awk -f -`, `make -f -`, and
//     programs that take commands from stdin (sqlite3, psql, ...), when a
//     pipe, a here-document or an input redirection feeds them. A shell
//     pattern must name a script file (`bash build.sh`), never `bash`
//     alone or with options only.
//   - Variables set by a prefix (`X=1 cmd`), by `env`, or alone (`X=1`) take
//     literal values, and never a name on the deny list of envNameOK:
//     those that make programs load code, configuration or credentials
//     (PATH and *PATH, LD_*, DYLD_*, GIT_*, BASH*, ENV, IFS, PS1-PS4, HOME
//     and *HOME, XDG_*, *CONFIG, *_FILE, *_DIR, *OPT, *OPTS, *_OPTIONS,
//     *FLAGS, *_COMMAND, *PAGER, *SHELL, *ASKPASS, EDITOR, CC, the
//     interpreters' and package managers' prefixes, proxies, ...). GOOS,
//     GOARCH, GOARM, GOAMD64, GOMAXPROCS, GOGC and CGO_ENABLED are allowed.
//   - Wrappers whose inner command is visible are matched on it, parsed
//     recursively up to maxShellDepth levels: `env [-i] [-u NAME] [X=1]...
//     cmd`, `timeout [-s SIG] [-k DUR] [--preserve-status] [--foreground]
//     DUR cmd`, `nice [-n N] cmd`, `nohup cmd`, `time [-p] cmd`, and
//     `sh`/`bash`/`dash` `-c 'literal script'` with options from -e -u -x -v
//     and -o pipefail/errexit/nounset/xtrace/verbose. Another option of a
//     wrapper makes it opaque; so do `env -i` and `env -u` of a name that
//     envNameOK refuses, which would drop the git lockdown. A pattern never
//     names a wrapper, and names a shell only with a literal script file
//     (`bash build.sh`).
//   - Programs that run what the parser cannot see never match: eval,
//     source, `.`, exec, command, builtin, xargs, sudo, su, doas, alias,
//     trap, hash and the others of opaque; find with -exec, -execdir, -ok,
//     -okdir or -fprint*/-fls; git with global options other than a few
//     harmless ones (-c, --config-env, --exec-path, --git-dir, --work-tree
//     never), a subcommand that is not a known git command (an alias could
//     run `!sh`), `git config` other than reading, and options that name a
//     program (--upload-pack, --receive-pack, --exec, --template, --config,
//     --extcmd, --open-files-in-pager, --output, in any abbreviation, `-u`
//     and `-c` of clone, `-x`/-i of rebase, `-O` of grep, ext:: URLs);
//     test/[ with -v or -R and printf -v (bash evaluates subscripts);
//     tar, rsync, zip, ssh, scp, sftp, wget and curl with the options that
//     name a program or a config file (argDanger); pagers and editors.
//   - `true`, `false`, `:`, and `set` with -e -u -x -v or -o pipefail,
//     errexit, nounset, xtrace need no rule: they run nothing.
//
// What a matched program does with its literal arguments is the pattern's
// scope: `python *` approves any Python program, `sed *` and `awk *` any
// script of theirs, and a rule for a program that runs the workdir's code
// runs whatever that code is now: `make build` the Makefile, `npm run *`
// and `npx *` package.json and node_modules, `python -m *` a module found
// from the workdir first, `go test ./...` the packages and tests there,
// `bash build.sh` build.sh, whoever wrote them. Programs that write
// files the script does not name (tar and unzip extracting, curl -O, wget,
// rsync, patch, interpreters) can write any name, a git directory's files
// included. git is the exception that can be locked down: a command that a
// rule approved runs with the environment of tools/command's gitLockdown,
// so that no config or hook of any repository makes git run a program
// (except the drivers a repository names itself, which only a person or
// one of those writers can have put there).
// Paths are checked lexically, so a symbolic link in the workdir can lead a
// redirection out of it: containment (T8) is what stops that write.
const (
	maxShellDepth  = 4
	maxScriptBytes = 64 << 10
)

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
	if opaque[path.Base(name)] || wrappers[path.Base(name)] {
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

// shellCheck walks one script against a set of patterns.
type shellCheck struct {
	pats []cmdPattern
	used map[int]bool
	// stdin: the command being checked reads what the script feeds it (a
	// pipe, a here-document, an input redirection), not the empty stdin
	// of the tool.
	stdin bool
}

// commandAllowed reports whether every simple command of script is matched
// by a pattern, and returns the indexes of the rules it used.
func commandAllowed(script string, pats []cmdPattern) (map[int]bool, bool) {
	c := &shellCheck{pats: pats, used: map[int]bool{}}
	if !c.script(script, 0) {
		return nil, false
	}
	return c.used, true
}

func (c *shellCheck) script(src string, depth int) bool {
	if depth > maxShellDepth || len(src) > maxScriptBytes || !plainText(src) {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) == 0 {
		return false
	}
	if !noHiddenCode(f) {
		return false
	}
	return c.stmts(f.Stmts, depth)
}

// plainText refuses text where the parser and sh were seen to disagree
// (checked against dash): control characters other than tab and newline
// (the parser takes a carriage return for a blank, sh for part of a word),
// and a line with '#' that ends in a backslash (the parser joins a comment
// with the next line, sh ends the comment there and runs that line).
func plainText(src string) bool {
	for i := 0; i < len(src); i++ {
		if c := src[i]; (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return false
		}
	}
	for _, line := range strings.Split(src, "\n") {
		if strings.HasSuffix(line, "\\") && strings.Contains(line, "#") {
			return false
		}
	}
	return true
}

// noHiddenCode is a second look over the whole tree, independent of the
// walk below: any node that runs or expands something the walk does not
// show refuses the script.
func noHiddenCode(f *syntax.File) bool {
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp,
			*syntax.ArithmCmd, *syntax.LetClause, *syntax.FuncDecl, *syntax.CoprocClause,
			*syntax.ExtGlob, *syntax.DeclClause, *syntax.TestClause, *syntax.TestDecl,
			*syntax.ForClause, *syntax.CaseClause, *syntax.BraceExp, *syntax.ArrayExpr:
			ok = false
		case *syntax.SglQuoted:
			if n.Dollar {
				ok = false
			}
		case *syntax.DblQuoted:
			if n.Dollar {
				ok = false
			}
		}
		return ok
	})
	return ok
}

func (c *shellCheck) stmts(list []*syntax.Stmt, depth int) bool {
	for _, s := range list {
		if !c.stmt(s, depth) {
			return false
		}
	}
	return true
}

func (c *shellCheck) stmt(s *syntax.Stmt, depth int) bool {
	if s == nil {
		return true
	}
	if s.Coprocess || s.Disown || s.Cmd == nil {
		// A statement of redirections alone (`> main.go`) names no program.
		return false
	}
	for _, r := range s.Redirs {
		if !redirectOK(r) {
			return false
		}
	}
	defer func(fed bool) { c.stdin = fed }(c.stdin)
	if feedsStdin(s.Redirs) {
		c.stdin = true
	}
	switch cmd := s.Cmd.(type) {
	case *syntax.CallExpr:
		return c.call(cmd, depth)
	case *syntax.BinaryCmd:
		if cmd.Op != syntax.AndStmt && cmd.Op != syntax.OrStmt && cmd.Op != syntax.Pipe {
			return false // |& is bash's; sh reads it otherwise
		}
		if !c.stmt(cmd.X, depth) {
			return false
		}
		if cmd.Op == syntax.Pipe {
			c.stdin = true
		}
		return c.stmt(cmd.Y, depth)
	case *syntax.Subshell:
		return c.stmts(cmd.Stmts, depth)
	case *syntax.Block:
		return c.stmts(cmd.Stmts, depth)
	case *syntax.IfClause:
		for ic := cmd; ic != nil; ic = ic.Else {
			if !c.stmts(ic.Cond, depth) || !c.stmts(ic.Then, depth) {
				return false
			}
		}
		return true
	case *syntax.WhileClause:
		return c.stmts(cmd.Cond, depth) && c.stmts(cmd.Do, depth)
	case *syntax.TimeClause:
		return c.stmt(cmd.Stmt, depth)
	default:
		return false
	}
}

func (c *shellCheck) call(ce *syntax.CallExpr, depth int) bool {
	for _, a := range ce.Assigns {
		if a == nil || a.Name == nil || a.Naked || a.Index != nil || a.Array != nil || !envNameOK(a.Name.Value) {
			return false
		}
		if a.Value != nil {
			v, ok := evalWord(a.Value)
			if !ok || v.expands || strings.Contains(v.val, "~") {
				return false
			}
		}
	}
	if len(ce.Args) == 0 {
		return len(ce.Assigns) > 0
	}
	ws := make([]word, 0, len(ce.Args))
	for _, w := range ce.Args {
		v, ok := evalWord(w)
		if !ok {
			return false
		}
		ws = append(ws, v)
	}
	return c.simple(ws, depth)
}

// simple checks one simple command given as its words.
func (c *shellCheck) simple(ws []word, depth int) bool {
	if depth > maxShellDepth || len(ws) == 0 {
		return false
	}
	name := ws[0]
	if name.expands || name.val == "" || strings.ContainsAny(name.val, "*?[]{}~=$`\"'\\\n\t ") {
		return false
	}
	prog := path.Base(name.val)
	if opaque[prog] {
		return false
	}
	if !wordsOK(ws, prog) {
		return false
	}
	args := ws[1:]
	if c.stdin && programFromStdin(prog, args) {
		return false
	}
	if !systemProgram(name.val) {
		// ./env or /tmp/x/sh is whatever file is there: it is matched as
		// itself, never unwrapped or taken for a builtin.
		if shells[prog] || wrappers[prog] || noops[prog] {
			return c.matchPatterns(ws)
		}
	}
	switch prog {
	case "true", "false", ":":
		return true
	case "set":
		return setOK(args)
	case "env":
		return c.env(ws, depth)
	case "timeout":
		return c.timeout(args, depth)
	case "nice":
		return c.nice(ws, depth)
	case "nohup":
		if !literal(args) {
			return false
		}
		if len(args) > 0 && args[0].val == "--" {
			args = args[1:]
		}
		if len(args) == 0 || strings.HasPrefix(args[0].val, "-") {
			return false
		}
		return c.simple(args, depth+1)
	case "time":
		return c.time(args, depth)
	case "sh", "bash", "dash":
		if inner, ok := shellDashC(args); ok {
			return inner != nil && c.script(inner.val, depth+1)
		}
		// Without -c the shell runs a file named by a literal pattern; an
		// option before it (-i, -s, --rcfile, ...) is never matched, nor a
		// shell that reads its script from stdin.
		if len(args) == 0 || strings.HasPrefix(args[0].val, "-") || strings.HasPrefix(args[0].val, "+") || args[0].expands {
			return false
		}
	case "git":
		if !gitOK(args) {
			return false
		}
	case "find":
		if !findOK(args) {
			return false
		}
	case "tar", "rsync", "zip", "ssh", "scp", "sftp", "wget", "curl":
		if !argsOK(prog, args) {
			return false
		}
	case "test", "[":
		if !literal(args) || hasWord(args, "-v", "-R") {
			return false
		}
	case "printf":
		if !literal(args) {
			return false
		}
		for _, a := range args {
			if strings.HasPrefix(a.val, "-v") {
				return false
			}
		}
	case "cd", "pushd":
		if len(args) != 1 || !literal(args) || !insideWorkdir(args[0].val) || inGitDir(args[0].val) || strings.HasPrefix(args[0].val, "-") {
			return false
		}
	}
	return c.matchPatterns(ws)
}

// wordsOK refuses a command whose words name, or could expand to, a key or
// credentials file (read only with a person's approval, C4), a path in a
// .git folder, or a file of any git directory (gitDirFile): a written
// config, HEAD or hook can make the next git run any program. HEAD is a
// revision to git, and git's subcommand word (`git config`) is no path.
func wordsOK(ws []word, prog string) bool {
	isGit := prog == "git"
	sub := -1
	if isGit {
		sub = gitSubcommand(ws[1:]) + 1
	}
	for i, w := range ws {
		if w.expands {
			if expandedMayBeGuarded(w.pat, !isGit) {
				return false
			}
			continue
		}
		if SensitivePath(w.val) || inGitDir(w.val) {
			return false
		}
		if i > 0 && i != sub && gitDirFile(w.val, !isGit) {
			return false
		}
	}
	return true
}

// stdinNames are operands that make a program read its stdin as a file.
var stdinNames = []string{"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}

func isStdinName(a string) bool {
	for _, n := range stdinNames {
		if a == n || (n != "-" && strings.HasSuffix(a, "="+n)) || (n != "-" && strings.HasPrefix(a, "-") && strings.HasSuffix(a, n)) {
			return true
		}
	}
	return false
}

// interpreters run a program they read from stdin when no script operand
// comes first; scriptReaders read a script from a file option (-f FILE),
// which may be stdin; stdinCommands take commands from stdin whatever their
// arguments (sqlite3's .shell, psql's \!).
var (
	interpreters = setOf("sh", "bash", "dash", "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs",
		"bun", "deno", "perl", "ruby", "irb", "php", "lua", "luajit", "tclsh", "wish", "Rscript", "R", "julia",
		"pwsh", "guile", "racket", "sbcl", "ocaml", "scala", "groovy", "jshell", "ghci", "erl", "elixir", "iex")
	scriptReaders = setOf("awk", "gawk", "mawk", "nawk", "sed", "make", "gmake", "jq", "m4")
	stdinCommands = setOf("sqlite3", "psql", "mysql", "mariadb", "dc", "lftp", "sftp", "ftp", "telnet", "nc", "gdb")
)

// programFromStdin reports whether prog, with args, would run a program
// fed to it on stdin: an interpreter without a script operand (or with -
// or /dev/stdin for one), a script reader with stdin for its script file,
// or a program that takes commands from stdin. Data on stdin is fine:
// `echo x | python3 tool.py` runs tool.py.
func programFromStdin(prog string, args []word) bool {
	base := prog
	if strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pypy") {
		base = strings.TrimRight(base, "0123456789.")
	}
	if stdinCommands[base] {
		return true
	}
	for _, a := range args {
		if isStdinName(a.val) {
			return true
		}
	}
	if scriptReaders[base] {
		return false
	}
	if !interpreters[base] && !interpreters[prog] {
		return false
	}
	if len(args) == 0 {
		return true
	}
	switch args[0].val {
	case "-c", "-m", "-e", "-E", "--eval":
		return len(args) < 2
	}
	return strings.HasPrefix(args[0].val, "-") || strings.HasPrefix(args[0].val, "+")
}

func (c *shellCheck) matchPatterns(ws []word) bool {
	for _, p := range c.pats {
		if p.match(ws) {
			c.used[p.rule] = true
			return true
		}
	}
	return false
}

// env [-i] [-u NAME] [--] [NAME=VALUE]... [cmd args...]
func (c *shellCheck) env(ws []word, depth int) bool {
	args := ws[1:]
	if !literal(args) {
		return false
	}
	i := 0
options:
	for i < len(args) {
		a := args[i].val
		switch {
		case a == "-i" || a == "--ignore-environment" || a == "-":
			// It would drop the environment that locks git down for
			// commands that rules approve.
			return false
		case a == "-u" || a == "--unset":
			if i+1 >= len(args) || !envNameOK(args[i+1].val) {
				return false
			}
			i += 2
		case strings.HasPrefix(a, "--unset=") || (strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--")):
			name := strings.TrimPrefix(strings.TrimPrefix(a, "--unset="), "-u")
			if !envNameOK(name) {
				return false
			}
			i++
		case a == "--":
			i++
			break options
		case strings.HasPrefix(a, "-"):
			return false // -S, -C, -P, --split-string, --chdir, ...
		default:
			break options
		}
	}
	for i < len(args) && strings.Contains(args[i].val, "=") {
		name, _, _ := strings.Cut(args[i].val, "=")
		if !envNameOK(name) {
			return false
		}
		i++
	}
	if i >= len(args) {
		return c.matchPatterns(ws)
	}
	return c.simple(args[i:], depth+1)
}

// timeout [options] DURATION cmd args...
func (c *shellCheck) timeout(args []word, depth int) bool {
	if !literal(args) {
		return false
	}
	i := 0
options:
	for i < len(args) {
		a := args[i].val
		switch {
		case a == "--preserve-status" || a == "--foreground" || a == "-v" || a == "--verbose":
			i++
		case a == "-s" || a == "--signal" || a == "-k" || a == "--kill-after":
			i += 2
		case strings.HasPrefix(a, "--signal=") || strings.HasPrefix(a, "--kill-after=") ||
			((strings.HasPrefix(a, "-s") || strings.HasPrefix(a, "-k")) && !strings.HasPrefix(a, "--")):
			i++
		case a == "--":
			i++
			break options
		case strings.HasPrefix(a, "-"):
			return false
		default:
			break options
		}
	}
	if i+1 >= len(args) {
		return false // no duration or no command
	}
	return c.simple(args[i+1:], depth+1)
}

// nice [-n N | -N | --adjustment=N] [cmd args...]
func (c *shellCheck) nice(ws []word, depth int) bool {
	args := ws[1:]
	if !literal(args) {
		return false
	}
	i := 0
options:
	for i < len(args) {
		a := args[i].val
		switch {
		case a == "-n" || a == "--adjustment":
			i += 2
		case strings.HasPrefix(a, "--adjustment=") || (strings.HasPrefix(a, "-n") && !strings.HasPrefix(a, "--")) || isNegNumber(a):
			i++
		case a == "--":
			i++
			break options
		case strings.HasPrefix(a, "-"):
			return false
		default:
			break options
		}
	}
	if i >= len(args) {
		return c.matchPatterns(ws)
	}
	return c.simple(args[i:], depth+1)
}

// time [-p] [--] cmd args...
func (c *shellCheck) time(args []word, depth int) bool {
	if !literal(args) {
		return false
	}
	i := 0
	for i < len(args) && args[i].val == "-p" {
		i++
	}
	if i < len(args) && args[i].val == "--" {
		i++
	}
	if i >= len(args) {
		return i == len(args)
	}
	if strings.HasPrefix(args[i].val, "-") {
		return false // -o FILE, -f FORMAT, ...
	}
	return c.simple(args[i:], depth+1)
}

// shellDashC finds the script of `sh -c SCRIPT [name args...]`. ok is false
// when there is no -c (the shell runs a file or its stdin: a program like
// any other). inner is nil when there is a -c but the script or an option
// is not literal or not known.
func shellDashC(args []word) (inner *word, ok bool) {
	sawC := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i].val
		if args[i].expands {
			break
		}
		if a == "--norc" || a == "--noprofile" {
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		flags := a[1:]
		if strings.HasSuffix(flags, "o") {
			if i+1 >= len(args) || args[i+1].expands || !safeSetOption[args[i+1].val] {
				break
			}
			flags = flags[:len(flags)-1]
			if strings.Trim(flags, "ceuxv") != "" {
				break
			}
			i++
		} else if strings.Trim(flags, "ceuxv") != "" {
			break
		}
		if strings.Contains(flags, "c") {
			if a[0] != '-' {
				return nil, true
			}
			sawC = true
		}
	}
	if !sawC {
		return nil, false
	}
	if i >= len(args) || !literal(args[i:]) {
		return nil, true
	}
	return &args[i], true
}

var safeSetOption = map[string]bool{"pipefail": true, "errexit": true, "nounset": true, "xtrace": true, "verbose": true}

// setOK accepts `set` with options that change no command lookup.
func setOK(args []word) bool {
	if !literal(args) {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i].val
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			return false
		}
		flags := a[1:]
		if strings.HasSuffix(flags, "o") {
			// -o NAME, also at the end of a cluster: -euo pipefail.
			if i+1 >= len(args) || !safeSetOption[args[i+1].val] {
				return false
			}
			i++
			flags = flags[:len(flags)-1]
		}
		if strings.Trim(flags, "euxv") != "" {
			return false
		}
	}
	return true
}

func isNegNumber(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	return strings.Trim(a[1:], "0123456789") == ""
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

// feedsStdin reports whether redirections give a command's stdin from the
// script: <, <>, here-documents and here-strings, <&N on fd 0.
func feedsStdin(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		if r == nil {
			continue
		}
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
			return true
		}
	}
	return false
}

// redirectOK keeps redirections inside the workdir (T4).
func redirectOK(r *syntax.Redirect) bool {
	if r == nil {
		return false
	}
	if r.N != nil && strings.Trim(r.N.Value, "0123456789") != "" {
		return false // {var}> names a variable
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		// The body is data; noHiddenCode refused expansions in it.
		return true
	case syntax.WordHdoc:
		return false
	}
	t, ok := evalWord(r.Word)
	if !ok || t.expands {
		return false
	}
	switch r.Op {
	case syntax.DplIn, syntax.DplOut:
		// >&file is bash's &>file; sh reads only a number or '-' there.
		return t.val == "-" || (t.val != "" && strings.Trim(t.val, "0123456789") == "")
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrInOut, syntax.RdrClob:
		return fileTargetOK(t.val)
	}
	// &> and &>> are bash's: sh reads `cmd &> f more` as `cmd &` and a
	// second command `> f more`, which the parser does not show (found by
	// running dash).
	return false
}

var deviceTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/stdin": true}

func fileTargetOK(t string) bool {
	if deviceTargets[t] {
		return true
	}
	return insideWorkdir(t) && !inGitDir(t) && !SensitivePath(t) && !gitDirFile(t, true)
}

// inGitDir reports whether p names something inside a .git folder, in any
// letter case: writing a repository's config or hooks makes a later `git`
// run any program.
func inGitDir(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.EqualFold(seg, ".git") {
			return true
		}
	}
	return false
}

// insideWorkdir reports whether p is a relative path that stays under the
// directory it is resolved from, lexically: not absolute, no `..`, no `~`.
func insideWorkdir(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.ContainsAny(p, "\x00\\") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return false
		}
	}
	return true
}

// opaque programs run code the parser cannot see, or change how later
// commands are found; they never match, whatever the rules say.
var opaque = setOf(
	"eval", "source", ".", "exec", "command", "builtin", "xargs", "sudo", "su", "doas", "pkexec",
	"runuser", "chroot", "nsenter", "unshare", "setsid", "stdbuf", "unbuffer", "script", "watch",
	"parallel", "flock", "chrt", "ionice", "taskset", "strace", "ltrace", "gdb", "valgrind",
	"busybox", "toybox", "systemd-run", "at", "batch", "crontab", "expect", "alias", "unalias",
	"trap", "hash", "enable", "fc", "bind", "shopt", "mapfile", "readarray", "read", "getopts",
	"let", "declare", "typeset", "local", "export", "readonly", "unset", "coproc", "function",
	"popd", "caller", "compgen", "complete", "disown", "wait", "zsh", "ksh", "mksh", "fish",
	"csh", "tcsh", "ash", "posh", "yash", "firejail", "bwrap", "proot", "fakeroot", "catchsegv",
	"sg", "newgrp", "sshpass", "osascript",
	// interactive programs that can start a shell
	"less", "more", "most", "man", "vi", "vim", "nvim", "view", "vimdiff", "emacs", "nano", "pico", "ed", "ex",
	"mc", "tmux", "screen", "script", "ftp", "telnet",
)

// argDanger lists, per program, options that make it run another program
// (long options in any unambiguous abbreviation, short ones in a cluster).
var argDanger = map[string]struct {
	long  []string
	short string
}{
	"tar":   {[]string{"to-command", "checkpoint-action", "use-compress-program", "info-script", "new-volume-script", "rsh-command", "rmt-command", "index-file"}, "IF"},
	"rsync": {[]string{"rsh", "rsync-path", "config"}, "e"},
	"zip":   {[]string{"unzip-command", "test"}, "T"},
	"ssh":   {[]string{}, "oFS"},
	"scp":   {[]string{}, "oFS"},
	"sftp":  {[]string{}, "oFSD"},
	"wget":  {[]string{"execute", "config", "use-askpass"}, "e"},
	"curl":  {[]string{"config"}, "K"},
}

// argsOK refuses the options of argDanger.
func argsOK(prog string, args []word) bool {
	d, ok := argDanger[prog]
	if !ok {
		return true
	}
	if !literal(args) {
		return false
	}
	for _, w := range args {
		a := w.val
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			for _, l := range d.long {
				if name != "" && strings.HasPrefix(l, name) {
					return false
				}
			}
			continue
		}
		if len(a) >= 2 && a[0] == '-' && strings.ContainsAny(a[1:], d.short) {
			return false
		}
	}
	return true
}

// noops run nothing: they need no rule.
var noops = setOf("true", "false", ":", "set")

// systemProgram reports whether a command name finds the system's program
// of that name: a bare name looked up in the worker's PATH, or one in /bin,
// /usr/bin or /usr/local/bin.
func systemProgram(name string) bool {
	if !strings.Contains(name, "/") {
		return true
	}
	switch path.Dir(name) {
	case "/bin", "/usr/bin", "/usr/local/bin":
		return path.Clean(name) == name
	}
	return false
}

// shells run a script given with -c (matched on that script) or a file.
var shells = setOf("sh", "bash", "dash")

// wrappers are unwrapped by simple; a pattern never names one.
var wrappers = setOf("env", "timeout", "nice", "nohup", "time")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// envNameOK refuses variables that make programs load code, configuration
// or credentials from elsewhere (a deny list: names, prefixes and suffixes;
// when a name is not known to be harmless and looks like one of these, the
// call asks).
func envNameOK(name string) bool {
	if !syntax.ValidName(name) {
		return false
	}
	u := strings.ToUpper(name)
	switch u {
	case "GOOS", "GOARCH", "GOARM", "GOAMD64", "GOMAXPROCS", "GOGC", "CGO_ENABLED":
		return true
	case "ENV", "SHELLOPTS", "IFS", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "EDITOR", "VISUAL", "BROWSER",
		"CC", "CXX", "CPP", "AR", "AS", "LD", "FC", "NM", "RANLIB", "STRIP", "OBJCOPY", "RUSTC", "RUSTDOC",
		"HOSTALIASES", "MAIL", "HISTFILE", "INPUTRC", "MAKEFILES", "TERMCAP", "TERMINFO", "ZDOTDIR", "LESS",
		"LESSKEY", "ALL_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "TMPDIR", "TEMP", "TMP", "USER", "LOGNAME":
		return false
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH", "XDG_", "PYTHON", "PERL", "RUBY", "NODE_", "NPM_",
		"YARN_", "PNPM_", "BUN_", "DENO_", "JAVA", "_JAVA", "JDK_", "MAVEN", "GRADLE", "SBT_", "CGO_", "GO", "CARGO_",
		"RUSTUP_", "RUSTC_", "PIP_", "PIPX_", "UV_", "POETRY_", "CONDA", "VIRTUAL_ENV", "GEM_", "BUNDLE_",
		"COMPOSER_", "PHP", "LUA_", "R_", "SSL_", "OPENSSL", "CURL_", "WGET", "SSH_", "GNUPG", "GPG_", "SUDO_",
		"DOCKER_", "KUBE", "HELM_", "AWS_", "AZURE_", "GOOGLE_", "CLOUDSDK_", "TF_", "ANSIBLE_", "LESS", "MAN",
		"PAGER", "GIT", "HG", "SVN_", "EMACS", "VIM", "NVIM", "GCONV", "LOCPATH", "NLSPATH", "MALLOC_", "GLIBC_"} {
		if strings.HasPrefix(u, p) {
			return false
		}
	}
	for _, s := range []string{"PATH", "_OPTIONS", "OPT", "OPTS", "FLAGS", "_COMMAND", "_CMD", "PAGER", "SHELL",
		"ASKPASS", "HOME", "_ENV", "RC", "CONFIG", "_CONF", "_FILE", "_DIR", "_DIRS", "PROGRAM", "_PRELOAD",
		"_LIBRARY", "_HOOK", "_HOOKS", "_WRAPPER", "_PLUGIN", "_PLUGINS", "_EXEC", "_EXECUTABLE", "_BIN",
		"_EDITOR", "_PROXY", "_INDEX_URL", "_REGISTRY", "_TOKEN", "_KEY", "_SECRET", "_PASSWORD"} {
		if strings.HasSuffix(u, s) {
			return false
		}
	}
	return true
}

// findOK refuses find actions that run programs or write files.
func findOK(args []word) bool {
	if !literal(args) {
		return false
	}
	return !hasWord(args, "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls")
}

// gitCommands are git's own commands. An alias never shadows one of them,
// so a subcommand from this list is not an alias that could run `!sh`.
var gitCommands = setOf(
	"add", "annotate", "apply", "archive", "blame", "branch", "bundle", "cat-file", "check-attr",
	"check-ignore", "checkout", "cherry", "cherry-pick", "clean", "clone", "commit", "config",
	"count-objects", "describe", "diff", "diff-files", "diff-index", "diff-tree", "fetch",
	"for-each-ref", "format-patch", "fsck", "gc", "grep", "init", "log", "ls-files", "ls-remote",
	"ls-tree", "merge", "merge-base", "mv", "name-rev", "notes", "pull", "push", "range-diff",
	"rebase", "reflog", "remote", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
	"shortlog", "show", "show-ref", "stash", "status", "switch", "tag", "version", "whatchanged",
	"worktree", "hash-object", "verify-commit", "verify-tag", "var",
)

// gitLongDanger are long options that name a program or a file to write;
// git accepts any unambiguous abbreviation, so prefixes are refused too.
var gitLongDanger = []string{"upload-pack", "receive-pack", "exec", "template", "config", "config-env",
	"extcmd", "open-files-in-pager", "output", "exec-path", "git-dir", "work-tree", "tool", "separate-git-dir"}

// gitSubcommand is the index in git's arguments of its subcommand, after
// the global options; -1 when there is none.
func gitSubcommand(args []word) int {
	for i := 0; i < len(args); i++ {
		a := args[i].val
		if a == "-C" {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return i
		}
	}
	return -1
}

func gitOK(args []word) bool {
	if !literal(args) {
		return false
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i].val
		if a == "-C" {
			if i+1 >= len(args) || !insideWorkdir(args[i+1].val) {
				return false
			}
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch a {
		case "--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--version":
		default:
			return false // -c, --config-env, --exec-path, --git-dir, --work-tree, -p, ...
		}
	}
	if i >= len(args) {
		return true // git --version
	}
	sub := args[i].val
	if !gitCommands[sub] {
		return false
	}
	rest := args[i+1:]
	for _, w := range rest {
		a := w.val
		if l := strings.ToLower(a); strings.Contains(l, "ext::") || strings.Contains(l, "fd::") {
			return false // a transport that runs a program, also in --remote=ext::...
		}
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			name, _, _ := strings.Cut(a[2:], "=")
			for _, d := range gitLongDanger {
				if strings.HasPrefix(d, name) || strings.HasPrefix(name, d) {
					return false
				}
			}
			continue
		}
		if len(a) >= 2 && a[0] == '-' && a[1] != '-' {
			flags := a[1:]
			switch sub {
			case "clone":
				if strings.ContainsAny(flags, "uc") {
					return false
				}
			case "ls-remote":
				if strings.ContainsAny(flags, "u") {
					return false
				}
			case "rebase":
				if strings.ContainsAny(flags, "xi") {
					return false
				}
			case "grep":
				if strings.ContainsAny(flags, "O") {
					return false
				}
			case "archive":
				if strings.ContainsAny(flags, "o") {
					return false
				}
			case "difftool", "mergetool":
				return false
			}
		}
	}
	if sub == "rebase" {
		for _, w := range rest {
			if name, ok := strings.CutPrefix(w.val, "--"); ok && name != "" && strings.HasPrefix("interactive", name) {
				return false // --interactive in any abbreviation runs an editor
			}
		}
	}
	if sub == "config" {
		return gitConfigReadOnly(rest)
	}
	return true
}

// gitConfigReadOnly accepts `git config` only when it reads.
func gitConfigReadOnly(args []word) bool {
	reads := false
	for _, w := range args {
		switch a := w.val; {
		case a == "-l" || a == "--list" || a == "list" || a == "get" || strings.HasPrefix(a, "--get"):
			reads = true
		case a == "--add" || a == "--replace-all" || strings.HasPrefix(a, "--unset") || a == "set" ||
			a == "unset" || a == "--edit" || a == "-e" || a == "edit" || strings.Contains(a, "section"):
			return false
		}
	}
	return reads
}
