package approval

import (
	"path"
	"sort"
	"strings"
	"sync"
)

// Option allowlists (T11). With TablesV2 a command pattern over a program
// matches only a command whose every word the program's table
// (tables.go) classifies: its subcommand, each option (long, short,
// clustered, tar's dash-less first word, an unambiguous abbreviation of a
// long option where the program takes one, `--`), each option's operand and
// what each operand is. A word the table does not classify makes the
// command ask, whatever the pattern's `*` says; a program without a table
// matches no pattern. TablesLegacy is the matcher of the rounds recorded
// before (shellprog.go's per-program checks), kept so that they replay.

// Versions of the matcher. A round records the one it decides with in its
// snapshot (P2.2); zero is TablesLegacy, the version of the rounds recorded
// before there was a choice. A table edit that changes what matches is a
// new version: the old one stays, as TablesLegacy did.
const (
	TablesLegacy = 1
	TablesV2     = 2
	// TablesV3 is TablesV2 where no file-tool rule matches a path of the
	// protected set (ProtectedPath, T12).
	TablesV3      = 3
	TablesCurrent = TablesV3
)

// Class says what a tabled program can run (T11).
type Class string

const (
	// ClassPure programs run no other program whatever their operands.
	ClassPure Class = "pure"
	// ClassScripted programs read a program in an operand (sed, awk): the
	// table matches only scripts that run and write nothing.
	ClassScripted Class = "scripted"
	// ClassRunsWorkspaceCode programs run the workspace's code (python3,
	// node, go, npm, make): a rule over one is consent to run it.
	ClassRunsWorkspaceCode Class = "runs-workspace-code"
)

// argType is what a word of a command is.
type argType uint8

const (
	argNone      argType = iota
	argLit               // any literal word
	argNum               // a number: digits, an optional sign and unit suffix
	argPath              // a file read: a path inside the workdir, or - (stdin)
	argScript            // a file the program runs: a path inside the workdir
	argOut               // a file written: a path inside the workdir (a write form)
	argDir               // a folder worked in: a path inside the workdir
	argArchive           // tar's archive: a path; with ':' only under --force-local
	argSed               // a sed script (sedScriptOK)
	argPkg               // a Go package: no version (@), inside the workdir
	argRev               // a git revision or pathspec; REV:PATH names a file as a path does
	argLineRange         // git log -L: START,END:FILE or :FUNC:FILE, whose FILE is a path
	argTarget            // a make target: no '=' (a variable that could run $(shell))
	argRest              // the program's own arguments, read by the workspace's code
	argNever             // a program text that always asks (awk)
)

var argTypeNames = map[string]argType{
	"LIT": argLit, "NUM": argNum, "PATH": argPath, "SCRIPT": argScript, "OUT": argOut, "DIR": argDir,
	"ARCH": argArchive, "REV": argRev, "RANGE": argLineRange, "SED": argSed, "PKG": argPkg, "TARGET": argTarget, "REST": argRest, "NEVER": argNever,
}

// option is one option of a table, under each of its names.
type option struct {
	name     string // the first name the table gives, which checks refer to
	arg      argType
	arg2     argType // find's -fprintf FILE FORMAT
	optional bool    // the value only attached: --color[=WHEN]
	write    bool    // a write form: the command changes files
	deny     bool    // in the manual, never matched: it runs a program or reads unnamed files
	script   bool    // gives the script or pattern (sed -e, grep -e): no script operand then
}

// Program is one program's table: its syntax as its manual describes it,
// and what it is.
type Program struct {
	Class Class
	// Cite names the version and the manual the table was written from.
	Cite string
	// Opts: the options, "|"-separated groups of the names of one option,
	// each name optionally followed by =TYPE (a value: the next word, or
	// attached) or [=TYPE] (a value only attached); a group's first name
	// may be marked ! (never matched), > (a write form) or @ (gives the
	// script).
	Opts string
	// Longs are every long option of the manual, matched or not, for
	// abbreviations: a program whose Longs are set takes any unambiguous
	// prefix of one (getopt_long); without, only the exact names match.
	Longs string
	// First is the first operand when no @ option gave the script (sed's
	// script, grep's pattern, python3's program); Operands the others.
	First, Operands argType
	// MaxOps bounds the operands, First included; zero: any number.
	MaxOps int
	// NoOps: no operand at all.
	NoOps bool
	// StopAtFirst: options end at the first operand (python3 script args,
	// printf).
	StopAtFirst bool
	// Digits: -NUM is an option (head -5).
	Digits bool
	// OldStyle: a first word without a dash is a cluster of short options
	// whose values follow in letter order (tar xf A).
	OldStyle bool
	// Find: the words after the start points are find's expression, of
	// one-dash primaries (Opts) and operators.
	Find bool
	// GoFlags: Go's flag package: -name or --name, a value attached with =
	// or next, no clusters.
	GoFlags bool
	// Text: every word is text (echo, test).
	Text bool
	// Subs are the subcommands: the first operand names one, whose table
	// reads the rest.
	Subs map[string]*Program
	// Writes: every run changes files.
	Writes bool
	// Runs are the other programs it starts on its own (tar's
	// compressors), for the program set of a rule (RulePrograms).
	Runs []string
	// Check is a last look at the whole command.
	Check func(*parsed) bool
	// Tested is the range of versions the table holds for, "FROM-TO", TO
	// covering its later components (2.49 is every 2.49.x). The worker
	// probes a program that has one at start (VersionProbes); one outside
	// it matches exact commands only (Policy.Untested). Empty on the
	// shell's builtins and the shells: the shell that runs the command is
	// not a program the rule names.
	Tested string
	// Probe is the argument that makes the program print its version;
	// empty is --version.
	Probe string

	once   sync.Once
	byName map[string]*option
	longs  []string
}

// parsed is what a table read from a command.
type parsed struct {
	seen   map[string]int      // option name -> times given
	vals   map[string][]string // option name -> values
	ops    []word              // operands, First included
	write  bool
	script bool
	class  Class // the program's, or its subcommand's
}

func (p *Program) init() {
	p.once.Do(func() {
		p.byName = map[string]*option{}
		for _, group := range strings.Split(p.Opts, "|") {
			names := strings.Fields(group)
			if len(names) == 0 {
				continue
			}
			o := &option{}
			for i, n := range names {
				if i == 0 {
					for strings.ContainsAny(n[:1], "!>@") {
						switch n[0] {
						case '!':
							o.deny = true
						case '>':
							o.write = true
						case '@':
							o.script = true
						}
						n = n[1:]
					}
				}
				n, typ, hasType := strings.Cut(n, "=")
				if hasType {
					if strings.HasSuffix(n, "[") {
						n, o.optional = strings.TrimSuffix(n, "["), true
						typ = strings.TrimSuffix(typ, "]")
					}
					t1, t2, two := strings.Cut(typ, ",")
					o.arg = argTypeNames[t1]
					if two {
						o.arg2 = argTypeNames[t2]
					}
					if o.arg == argNone {
						panic("approval: table type " + typ)
					}
				}
				if i == 0 {
					o.name = n
				}
				p.byName[n] = o
			}
		}
		seen := map[string]bool{}
		for _, l := range strings.Fields(p.Longs) {
			seen[strings.TrimPrefix(l, "--")] = true
		}
		for n := range p.byName {
			if strings.HasPrefix(n, "--") {
				seen[n[2:]] = true
			}
		}
		for l := range seen {
			p.longs = append(p.longs, l)
		}
		sort.Strings(p.longs)
	})
}

// long finds the option a --name word gives: the exact name, or, for a
// program that takes abbreviations, the one long option of its manual
// that name begins.
func (p *Program) long(name string) *option {
	if o := p.byName["--"+name]; o != nil {
		return o
	}
	if p.Longs == "" || name == "" {
		return nil
	}
	found := ""
	for _, l := range p.longs {
		if strings.HasPrefix(l, name) {
			if found != "" {
				return nil // ambiguous: the program refuses it, or takes the other one
			}
			found = l
		}
	}
	if found == "" {
		return nil
	}
	return p.byName["--"+found]
}

// tableFor is the table of a command name: a program looked up by name, or
// one in /bin, /usr/bin or /usr/local/bin.
func tableFor(name string) (*Program, string) {
	if !systemProgram(name) {
		return nil, ""
	}
	prog := path.Base(name)
	p := programTables[prog]
	if p == nil {
		return nil, ""
	}
	p.init()
	return p, prog
}

// classifyCommand reads a simple command with its program's table; ok is
// false when some word is not one the table classifies.
func classifyCommand(ws []word) (pr *parsed, p *Program, ok bool) {
	p, _ = tableFor(ws[0].val)
	if p == nil {
		return nil, nil, false
	}
	pr = &parsed{seen: map[string]int{}, vals: map[string][]string{}, class: p.Class}
	if !p.read(ws[1:], pr) {
		return nil, p, false
	}
	return pr, p, true
}

// read classifies args, the words after the program's name (or its
// subcommand's).
func (p *Program) read(args []word, pr *parsed) bool {
	p.init()
	if p.Writes {
		pr.write = true
	}
	if p.Text {
		return p.Check == nil || p.Check(&parsed{ops: args, seen: pr.seen, vals: pr.vals})
	}
	if p.Find {
		return p.readFind(args, pr)
	}
	i := 0
	if p.OldStyle && len(args) > 0 && !strings.HasPrefix(args[0].val, "-") && args[0].val != "" {
		if args[0].expands {
			return false
		}
		letters := args[0].val
		i = 1
		for j := 0; j < len(letters); j++ {
			o := p.byName["-"+letters[j:j+1]]
			if o == nil || o.deny {
				return false
			}
			if o.arg == argNone || o.optional {
				pr.flag(o)
				continue
			}
			if i >= len(args) || !pr.value(o, args[i]) {
				return false
			}
			i++
		}
	}
	dd := false
	for ; i < len(args); i++ {
		w := args[i]
		a := w.val
		if dd || a == "-" || !strings.HasPrefix(a, "-") {
			if !dd && w.expands && !expandsToOperandOnly(w) {
				return false // a file named --to-command=... would be an option
			}
			if p.Subs != nil {
				sub := p.Subs[a]
				if sub == nil || w.expands {
					return false
				}
				if sub.Class != "" {
					pr.class = sub.Class
				}
				return sub.read(args[i+1:], pr)
			}
			pr.ops = append(pr.ops, w)
			if p.StopAtFirst {
				pr.ops = append(pr.ops, args[i+1:]...)
				break
			}
			continue
		}
		if w.expands {
			return false
		}
		if a == "--" {
			dd = true
			continue
		}
		if p.Digits && isNegNumber(a) {
			pr.seen["-NUM"]++
			continue
		}
		if p.GoFlags {
			name, val, has := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
			o := p.byName["-"+name]
			if o == nil || o.deny || !pr.option(o, val, has, true, args, &i) {
				return false
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, has := strings.Cut(a[2:], "=")
			o := p.long(name)
			if o == nil || o.deny || !pr.option(o, val, has, false, args, &i) {
				return false
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			o := p.byName["-"+a[j:j+1]]
			if o == nil || o.deny {
				return false
			}
			if o.arg == argNone || (o.optional && j+1 == len(a)) {
				pr.flag(o)
				continue
			}
			if j+1 < len(a) {
				if !pr.value(o, word{val: a[j+1:]}) {
					return false
				}
			} else {
				i++
				if i >= len(args) || o.optional || !pr.value(o, args[i]) {
					return false
				}
			}
			break
		}
	}
	if p.Subs != nil {
		// No subcommand: only global options (git --version).
		return p.Check == nil || p.Check(pr)
	}
	return p.operands(pr)
}

// operands types the operands and runs the table's last check.
func (p *Program) operands(pr *parsed) bool {
	ops := pr.ops
	if (p.NoOps && len(ops) > 0) || (p.MaxOps > 0 && len(ops) > p.MaxOps) {
		return false
	}
	if p.First != argNone && !pr.script {
		if len(ops) == 0 || !pr.operand(p.First, ops[0]) {
			return false
		}
		ops = ops[1:]
	}
	for _, w := range ops {
		if !pr.operand(p.Operands, w) {
			return false
		}
	}
	return p.Check == nil || p.Check(pr)
}

// expandsToOperandOnly reports whether a word the shell expands can only
// become words that do not start with '-'.
func expandsToOperandOnly(w word) bool {
	return w.pat != "" && !strings.ContainsAny(w.pat[:1], "*?[{-\\~")
}

// option takes the named option o: its value from "=val" when has, else
// from the next word (*i moves to it), none for an option that takes none
// or an optional value not given. An option without a value refuses
// "=val", but a Go flag's "=true" or "=false" (goFlag).
func (pr *parsed) option(o *option, val string, has, goFlag bool, args []word, i *int) bool {
	switch {
	case o.arg == argNone && has:
		if !goFlag || (val != "true" && val != "false") {
			return false
		}
		pr.flag(o)
	case o.arg == argNone || (o.optional && !has):
		pr.flag(o)
	case has:
		return pr.value(o, word{val: val})
	default:
		*i++
		return *i < len(args) && pr.value(o, args[*i])
	}
	return true
}

func (pr *parsed) flag(o *option) {
	pr.seen[o.name]++
	if o.write {
		pr.write = true
	}
	if o.script {
		pr.script = true
	}
}

func (pr *parsed) value(o *option, w word) bool {
	if w.expands || !pr.operand(o.arg, w) {
		return false
	}
	pr.flag(o)
	pr.vals[o.name] = append(pr.vals[o.name], w.val)
	return true
}

// operand checks one word as what the table says it is.
func (pr *parsed) operand(t argType, w word) bool {
	v := w.val
	switch t {
	case argLit, argRest:
		return true
	case argNum:
		v = strings.TrimLeft(v, "+-")
		d := strings.TrimRight(v, "bkKMGTPEZYRQiBw")
		return d != "" && strings.Trim(d, "0123456789") == "" && len(v)-len(d) <= 3
	case argPath:
		return v == "-" || readPathOK(v)
	case argScript:
		return readPathOK(v) && !isStdinName(v)
	case argOut:
		pr.write = true
		return !w.expands && v != "-" && fileTargetOK(v) && !strings.HasPrefix(v, "/dev/")
	case argDir:
		return !w.expands && readPathOK(v)
	case argArchive:
		return !w.expands && v != "" && (v == "-" || readPathOK(strings.ReplaceAll(v, ":", "_")))
	case argSed:
		return !w.expands && sedScriptOK(v)
	case argRev:
		// HEAD:.npmrc and :.env read a file of the repository.
		_, file, named := strings.Cut(v, ":")
		return !named || (!SensitivePath(file) && !inGitDir(file))
	case argLineRange:
		i := strings.LastIndexByte(v, ':')
		return i >= 0 && readPathOK(v[i+1:])
	case argPkg:
		return !strings.Contains(v, "@") && !strings.HasPrefix(v, "-") && insideWorkdir(v)
	case argTarget:
		return !w.expands && v != "" && !strings.ContainsAny(v, "=$") && !strings.HasPrefix(v, "-")
	}
	return false
}

// readPathOK: a relative path that stays in the workdir, outside .git
// folders and key files.
func readPathOK(p string) bool {
	return insideWorkdir(p) && !inGitDir(p) && !SensitivePath(p) && !strings.HasPrefix(p, "-")
}

// readFind reads find's start points and expression (findutils 4.9: the
// expression's words are primaries of one dash, operators, and their
// values; nothing is abbreviated).
func (p *Program) readFind(args []word, pr *parsed) bool {
	i := 0
	for ; i < len(args) && (args[i].val == "-H" || args[i].val == "-L" || args[i].val == "-P"); i++ {
		if args[i].expands {
			return false
		}
	}
	for ; i < len(args); i++ {
		a := args[i].val
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" || a == "," {
			break
		}
		if !pr.operand(argDir, args[i]) {
			return false
		}
		pr.ops = append(pr.ops, args[i])
	}
	for ; i < len(args); i++ {
		w := args[i]
		if w.expands {
			return false
		}
		switch w.val {
		case "(", ")", "!", ",", "-not", "-a", "-and", "-o", "-or":
			continue
		}
		o := p.byName[w.val]
		if o == nil || o.deny {
			return false
		}
		if o.arg == argNone {
			pr.flag(o)
			continue
		}
		i++
		if i >= len(args) || !pr.value(o, args[i]) {
			return false
		}
		if o.arg2 != argNone {
			i++
			if i >= len(args) || args[i].expands || !pr.operand(o.arg2, args[i]) {
				return false
			}
		}
	}
	return p.Check == nil || p.Check(pr)
}

// matchTabled is simple's last step with TablesV2: the command's program
// has a table that classifies every word, and a pattern matches it.
func (c *shellCheck) matchTabled(ws []word) bool {
	pr, _, ok := classifyCommand(ws)
	if !ok {
		return false
	}
	if !c.anyTabled && c.untested[path.Base(ws[0].val)] {
		// Outside its table's tested range: only a pattern that is the
		// very command (T11).
		if !c.matchExact(ws) {
			return false
		}
		if pr.write || pr.class == ClassRunsWorkspaceCode {
			c.writes = true
		}
		return true
	}
	if c.anyTabled || c.matchPatterns(ws) {
		if pr.write || pr.class == ClassRunsWorkspaceCode {
			c.writes = true
		}
		return true
	}
	return false
}

// tabledPatternOK refuses, with TablesV2, a pattern over a program without
// a table: it would never match.
func tabledPatternOK(p cmdPattern) bool {
	t, _ := tableFor(p.words[0])
	return t != nil
}

// ReadOnlyCommand reports whether the tables classify every command of
// script as one that changes no file: programs of class pure or scripted
// without a write form, and no redirection to a file. A script the tables
// do not classify is not read-only. It is what a rule's scope (read-only or
// write) is to be read from.
func ReadOnlyCommand(script string) (readOnly bool) {
	defer func() {
		if recover() != nil {
			readOnly = false
		}
	}()
	c := &shellCheck{used: map[int]bool{}, tables: TablesV2, anyTabled: true}
	return c.script(script, 0) && !c.writes
}

// RulePrograms are the programs a command pattern lets run: the program
// it names, the ones that program starts on its own, and the wrappers the
// matcher unwraps (env, nice, nohup, time, timeout: each runs the command
// after its options, and nothing else), with the program's class; ok is
// false when the pattern is not a command pattern over a tabled program.
// The oracle of T13 checks a matched command's execve calls against this
// set.
func RulePrograms(pattern string) (progs []string, class Class, ok bool) {
	cp, err := parseCommandPattern(pattern)
	if err != nil {
		return nil, "", false
	}
	p, name := tableFor(cp.words[0])
	if p == nil {
		return nil, "", false
	}
	progs = append([]string{name}, p.Runs...)
	ws := make([]string, 0, len(wrappers))
	for w := range wrappers {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	return append(progs, ws...), p.Class, true
}
