package approval

import (
	"math/rand"
	"sort"
	"strings"
)

// ExampleRule is a command rule the documentation shows, with the call it
// is remembered from: the rule's scope is the one that call gives it
// (RememberScoped without a scope).
type ExampleRule struct {
	Pattern  string
	Approved string
}

// ExampleRules are the command rules this project's documentation shows
// (docs/security.md, docs/concepts.md, README.md) and one rule over each
// tabled program, each with the call it is remembered from. The oracle of
// T13 runs its corpus (OracleCorpus) under every one of them.
var ExampleRules = []ExampleRule{
	{"git *", "git status"},
	{"git status *", "git status --short"},
	{"git log *", "git log --oneline"},
	{"git diff *", "git diff"},
	{"git add *", "git add a.txt"},
	{"git commit *", "git commit -m x"},
	{"echo *", "echo hello"},
	{"printf *", "printf x"},
	{"cat *", "cat a.txt"},
	{"head *", "head a.txt"},
	{"tail *", "tail a.txt"},
	{"wc *", "wc -l a.txt"},
	{"cut *", "cut -f1 a.txt"},
	{"uniq *", "uniq a.txt"},
	{"sort *", "sort a.txt"},
	{"ls *", "ls"},
	{"grep *", "grep -n a a.txt"},
	{"sed s/a/b/ *", "sed s/a/b/ a.txt"},
	{"sed *", "sed -n 1p a.txt"},
	{"sed -i *", "sed -i s/a/b/ a.txt"},
	{"tar *", "tar tf a.tar"},
	{"tar xf *", "tar xf a.tar"},
	// Rules over pure programs remembered from a write form: their scope
	// is write, under which only the protected set stays as it was.
	{"tar *", "tar xf a.tar"},
	{"find *", "find . -name x.tmp -delete"},
	{"sort *", "sort -o sorted.txt a.txt"},
	{"find *", "find . -name a.txt"},
	{"split *", "split a.txt"},
	{"make *", "make build"},
	{"npm run *", "npm run build"},
	{"python3 *", "python3 script.py"},
	{"node *", "node script.js"},
	{"sh script.sh", "sh script.sh"},
	{"go test *", "go test ./..."},
	{"go vet *", "go vet ./..."},
}

// OracleCorpus is the corpus of the matcher's oracle (T13), the same on
// every call: the probes of T11 (tableProbes); for every table, and every
// subcommand's, each option under each of its names, alone and with its
// value attached and apart, long names abbreviated, short ones clustered,
// tar's first word without a dash; then random combinations of them. Its
// operands name files of OracleFiles, key files and the protected set
// among them.
func OracleCorpus() []string {
	g := &corpusGen{r: rand.New(rand.NewSource(13)), seen: map[string]bool{}}
	for _, p := range tableProbes {
		for _, s := range p.scripts {
			g.add(s)
		}
	}
	names := make([]string, 0, len(programTables))
	for n := range programTables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g.program(n, programTables[n])
	}
	// The shell around a command: redirections, pipes and lists,
	// variables and wrappers before it, expansions.
	base := append([]string(nil), g.out...)
	for i, c := range base {
		if i%5 == 0 {
			g.add(oracleShellPrefixes[i/5%len(oracleShellPrefixes)] + c)
			g.add(c + oracleShellSuffixes[i/5%len(oracleShellSuffixes)])
		}
	}
	return g.out
}

var (
	oracleShellPrefixes = []string{"LD_PRELOAD=/tmp/x.so ", "GIT_EXTERNAL_DIFF=id ", "TAR_OPTIONS=--to-command=id ",
		"PATH=.:$PATH ", "env ", "command ", "exec ", "nice ", "timeout 5 ", "cd sub && ", "PAGER=id ",
		"GIT_DIR=.git ", "HOME=. ", "LC_ALL=C ", "builtin ", "x=$(id) ", "eval "}
	oracleShellSuffixes = []string{" > out.txt", " 2>/dev/null", " | wc -l", " && echo done", " >> .env", " > /tmp/x",
		"; id", " < a.txt", " &", " 2>&1 | head -1", " > .git/hooks/post-commit", " || true", " $(id)", " `id`",
		" >/dev/null", " | sh", " >&2"}
)

// OracleFiles are the files of the workspace that the corpus's operands
// name, with their contents; the oracle makes them in a git repository
// with one commit, an archive a.tar of a.txt and sub/c.txt, and an archive
// evil.tar whose members are key files and the protected set (.env,
// .git/config, .git/hooks/post-commit).
var OracleFiles = map[string]string{
	"a.txt":        "a\nb\na\nc\n",
	"b.txt":        "b\tx\nc\ty\n",
	"sub/c.txt":    "c\n",
	".env":         "TOKEN=oracle\n",
	"id_rsa":       "not a key\n",
	"key.pem":      "not a key\n",
	"script.py":    "print('ok')\n",
	"script.js":    "console.log('ok')\n",
	"script.sh":    "echo ok\n",
	"Makefile":     "build:\n\t@echo ok\n",
	"other.mk":     "all:\n\t@echo ok\n",
	"pats.txt":     "a\n",
	"package.json": `{"scripts": {"build": "echo ok", "test": "echo ok"}}` + "\n",
}

// Values of each kind of word: files of OracleFiles, key files and the
// protected set, folders, and words that run or write something.
var oracleValues = map[argType][]string{
	argLit:       {"a", "1", "x y", "%p", "-", "a.txt"},
	argNum:       {"1", "2", "10k"},
	argPath:      {"a.txt", "sub/c.txt", "b.txt", ".env", "id_rsa", "key.pem", ".git/config", "-", "pats.txt"},
	argScript:    {"script.sh", "script.py", "Makefile", ".git/hooks/pre-commit"},
	argOut:       {"out.txt", "sub/out", ".env", ".git/hooks/post-commit", "id_rsa", "../out"},
	argDir:       {"sub", ".", ".git", "out"},
	argArchive:   {"a.tar", "h:a.tar", "./a.tar", "evil.tar"},
	argSed:       {"s/a/b/", "1d", "p", "s/a/b/w out.txt", "e id", "r .env", "s/a/id/e", "W out.txt"},
	argPkg:       {"./...", ".", "./sub"},
	argRev:       {"HEAD", "a.txt", "HEAD:.env", "HEAD~1", "--", "sub"},
	argLineRange: {"1,2:a.txt", ":x:a.txt"},
	argTarget:    {"build", "all", "X=1"},
	argRest:      {"x", "--y"},
	argNever:     {"{print}", "BEGIN{system(\"id\")}"},
}

type corpusGen struct {
	r    *rand.Rand
	seen map[string]bool
	out  []string
	k    int
}

func (g *corpusGen) add(s string) {
	if !g.seen[s] {
		g.seen[s] = true
		g.out = append(g.out, s)
	}
}

// value is the next value of a kind, in turn.
func (g *corpusGen) value(t argType) string {
	vs := oracleValues[t]
	if len(vs) == 0 {
		return "x"
	}
	g.k++
	return shellQuote(vs[g.k%len(vs)])
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-:,~+=%@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// program adds the commands of one table: prefix is the command's words
// before its options ("git status").
func (g *corpusGen) program(prefix string, p *Program) {
	p.init()
	subs := make([]string, 0, len(p.Subs))
	for s := range p.Subs {
		subs = append(subs, s)
	}
	sort.Strings(subs)
	for _, s := range subs {
		g.program(prefix+" "+s, p.Subs[s])
	}
	if p.Text {
		for _, a := range []string{"hello", "-n a", "-e 'a\\nb'", "a -v x", "-f a.txt", "-v x", "-R", "$HOME"} {
			g.add(prefix + " " + a)
		}
		return
	}
	tail := func() string { return g.operands(p, subs) }
	head := prefix
	if p.Find {
		// find's start points come before its expression.
		head = func() string { return prefix + " " + g.value(argDir) }()
	}
	names := make([]string, 0, len(p.byName))
	for n := range p.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var forms, shorts []string
	for _, n := range names {
		o := p.byName[n]
		for _, f := range g.forms(p, n, o) {
			forms = append(forms, f)
			g.add(head + " " + f + tail())
			if p.Find {
				g.add(prefix + " " + f)
			}
		}
		if len(n) == 2 && n[0] == '-' && n != "--" && !p.GoFlags && !p.Find {
			shorts = append(shorts, n[1:])
		}
	}
	g.add(prefix + tail())
	// Clusters of short options; one that takes a value ends its
	// cluster, its value attached or in the next word.
	for i := 0; i < 2*len(shorts); i++ {
		c := ""
		for j := 0; j < 2+g.r.Intn(3); j++ {
			c += shorts[g.r.Intn(len(shorts))]
		}
		g.add(prefix + " -" + c + g.clusterValues(p, c, false) + tail())
	}
	if p.OldStyle {
		for i := 0; i < 6*len(shorts); i++ {
			c := []string{"x", "t", "d"}[g.r.Intn(3)]
			for j := 0; j < g.r.Intn(4); j++ {
				c += shorts[g.r.Intn(len(shorts))]
			}
			if g.r.Intn(3) > 0 {
				c += "f"
			}
			g.add(prefix + " " + c + g.clusterValues(p, c, true) + tail())
		}
	}
	// Random combinations.
	if len(forms) > 0 {
		for i := 0; i < len(forms)/4+8; i++ {
			cmd := head
			for j := 0; j < 1+g.r.Intn(3); j++ {
				cmd += " " + forms[g.r.Intn(len(forms))]
			}
			g.add(cmd + tail())
		}
	}
}

// clusterValues are the values a cluster's letters take: in letter order
// after a dash-less cluster (oldStyle), else the one of the option that
// ends the cluster.
func (g *corpusGen) clusterValues(p *Program, c string, oldStyle bool) string {
	s := ""
	for j := 0; j < len(c); j++ {
		o := p.byName["-"+c[j:j+1]]
		if o == nil || o.arg == argNone || o.optional {
			continue
		}
		s += " " + g.value(o.arg)
		if !oldStyle {
			break
		}
	}
	return s
}

// forms are the ways a command can give option o under name n.
func (g *corpusGen) forms(p *Program, n string, o *option) []string {
	var names []string
	names = append(names, n)
	if strings.HasPrefix(n, "--") && p.Longs != "" {
		// Abbreviations: the shortest the program would take, and one
		// letter less than the whole.
		full := n[2:]
		for k := 1; k < len(full); k++ {
			if p.long(full[:k]) == o {
				names = append(names, "--"+full[:k])
				break
			}
		}
		if len(full) > 3 {
			names = append(names, "--"+full[:len(full)-1])
		}
	}
	var out []string
	for _, name := range names {
		switch {
		case p.Find:
			f := name
			if o.arg != argNone {
				f += " " + g.value(o.arg)
			}
			if o.arg2 != argNone {
				f += " " + g.value(o.arg2)
			}
			out = append(out, f)
		case o.arg == argNone:
			out = append(out, name)
			if p.GoFlags {
				out = append(out, name+"=true", "-"+name)
			}
		case o.optional:
			out = append(out, name, name+"="+g.value(o.arg))
		case p.GoFlags:
			out = append(out, name+"="+g.value(o.arg), name+" "+g.value(o.arg), "-"+name+"="+g.value(o.arg))
		case strings.HasPrefix(name, "--"):
			out = append(out, name+"="+g.value(o.arg), name+" "+g.value(o.arg))
		default:
			out = append(out, name+g.value(o.arg), name+" "+g.value(o.arg))
		}
	}
	return out
}

// operands are a command's operands after its options: a subcommand for a
// program that has them, a start point for find, values of the table's
// kinds otherwise.
func (g *corpusGen) operands(p *Program, subs []string) string {
	switch {
	case len(subs) > 0:
		return " " + subs[g.r.Intn(len(subs))]
	case p.Find:
		return ""
	case p.NoOps:
		return ""
	}
	s := ""
	if p.First != argNone {
		s += " " + g.value(p.First)
	}
	if p.Operands != argNone {
		n := 1 + g.r.Intn(2)
		if p.MaxOps > 0 && n > p.MaxOps {
			n = p.MaxOps
		}
		for i := 0; i < n; i++ {
			s += " " + g.value(p.Operands)
		}
	}
	return s
}
