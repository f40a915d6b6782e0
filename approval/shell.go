package approval

import (
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
//   - With TablesV2 (T11, classify.go) the checks per program above
//     (shellprog.go's programRules) are replaced by the option tables: a
//     command matches only when its program's table classifies every word
//     of it, and a program without a table (a name with a `/` outside the
//     system folders included) matches no pattern.
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

// shellCheck walks one script against a set of patterns.
type shellCheck struct {
	pats []cmdPattern
	used map[int]bool
	// stdin: the command being checked reads what the script feeds it (a
	// pipe, a here-document, an input redirection), not the empty stdin
	// of the tool.
	stdin bool
	// tables is the matcher's version (TablesLegacy, TablesV2).
	tables int
	// anyTabled: every command a table classifies matches, as if a rule
	// named its program (ReadOnlyCommand).
	anyTabled bool
	// writes: a matched command has a write form, runs the workspace's
	// code, or a redirection writes a file.
	writes bool
	// untested are the programs outside their table's tested range
	// (Policy.Untested): their commands match exact patterns only.
	untested map[string]bool
}

// commandAllowed reports whether every simple command of script is matched
// by a pattern, and returns the indexes of the rules it used.
func commandAllowed(script string, pats []cmdPattern, tables int, untested map[string]bool) (map[int]bool, bool) {
	c := &shellCheck{pats: pats, used: map[int]bool{}, tables: tables, untested: untested}
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
		if writesFile(r) {
			c.writes = true
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
	if c.tables >= TablesV2 && !systemProgram(name.val) {
		return false // no table names ./build.sh or /tmp/x/sh
	}
	if !systemProgram(name.val) {
		// ./env or /tmp/x/sh is whatever file is there: it is matched as
		// itself, never unwrapped or taken for a builtin.
		if shells[prog] || isWrapper(prog) || noops[prog] {
			return c.matchPatterns(ws)
		}
	}
	switch prog {
	case "true", "false", ":":
		return true
	case "set":
		return setOK(args)
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
		if c.tables >= TablesV2 {
			return c.matchTabled(ws)
		}
		return c.matchPatterns(ws)
	}
	if w, ok := wrappers[prog]; ok {
		return c.unwrap(w, ws, depth)
	}
	if c.tables >= TablesV2 {
		return c.matchTabled(ws)
	}
	if rule, ok := programRules[prog]; ok && !rule(args) {
		return false
	}
	return c.matchPatterns(ws)
}

// matchExact is matchPatterns for a program outside its table's tested
// range: a pattern matches only when its words are the command's words,
// none of which the shell expands.
func (c *shellCheck) matchExact(ws []word) bool {
	for _, w := range ws {
		if w.expands {
			return false
		}
	}
	for _, p := range c.pats {
		if len(p.words) != len(ws) {
			continue
		}
		same := true
		for i, w := range ws {
			if p.words[i] != w.val {
				same = false
				break
			}
		}
		if same {
			c.used[p.rule] = true
			return true
		}
	}
	return false
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

// writesFile reports whether a redirection writes a file (not a device).
func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob:
		t, ok := evalWord(r.Word)
		return !ok || !deviceTargets[t.val]
	}
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
