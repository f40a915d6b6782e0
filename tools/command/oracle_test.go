package command

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// The oracle of the matcher (T13): the programs themselves, traced, say
// what a command a rule matched did.

// oracleTimeout bounds one traced command (tail -f waits for ever).
const oracleTimeout = 3 * time.Second

// oracleRule is an example rule, remembered and signed as a round does.
type oracleRule struct {
	approval.ExampleRule
	rules []approval.Rule
	progs []string
	class approval.Class
}

// oracleJob is one matched command, run with the scope the round gives it.
type oracleJob struct {
	rule  *oracleRule
	cmd   string
	scope string
}

// TestMatcherOracle (T13): every command of approval.OracleCorpus (at
// least 1,000: the probes, every option of every table in every form) that
// an example rule (approval.ExampleRules) matches through approval.Needs,
// as a round decides, runs the way a command that rule approved runs: sh -c
// in the sandbox with the rule's scope and git's locked environment
// (Tools.wrap, envFor), with strace as its parent inside the sandbox. Each
// successful execve after the shell names a program of the rule's set
// (approval.RulePrograms; not checked for runs-workspace-code programs);
// under a read-only rule no write-class call succeeded outside the private
// /tmp and home, and the workspace's tree (contents, modes, times) is
// unchanged; under every rule the protected set is unchanged. Without
// strace or ptrace it fails in CI and says why, and skips elsewhere.
func TestMatcherOracle(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		testenv.Unavailable(t, "strace is not installed (Debian: apt-get install strace; scripts/test.sh installs it): the matcher's oracle (T13) traces commands with it")
	}
	if strace, err = filepath.EvalSymlinks(strace); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Two workers, each with its own workdir and sandbox, as the machine
	// runs two commands at a time.
	const workers = 2
	var runners []*oracleRunner
	for i := 0; i < workers; i++ {
		runners = append(runners, newOracleRunner(t, strace))
	}
	runners[0].requireTracing(t)
	corpus := approval.OracleCorpus()
	require.GreaterOrEqual(t, len(corpus), 1000, "the corpus of T13")

	key := make([]byte, approval.KeySize)
	var rules []*oracleRule
	for _, e := range approval.ExampleRules {
		rs, err := approval.RememberScoped(approval.TablesCurrent, approval.KindCommand, RunCommand, canonicalCommand(t, e.Approved), e.Pattern, "", false)
		require.NoError(t, err, "example rule %q", e.Pattern)
		for i := range rs {
			rs[i] = approval.Sign(key, "oracle", "run", rs[i])
		}
		progs, class, ok := approval.RulePrograms(e.Pattern)
		require.True(t, ok, "example rule %q is over a tabled program", e.Pattern)
		r := &oracleRule{ExampleRule: e, rules: approval.Verified(key, "oracle", "run", rs), progs: progs, class: class}
		require.NotEmpty(t, r.rules)
		_, scope, ok := decide(r, e.Approved)
		require.True(t, ok, "example rule %q matches the call it was remembered from, %q", e.Pattern, e.Approved)
		require.NotEmpty(t, scope)
		rules = append(rules, r)
	}
	// A command two rules match with the same scope and program set
	// (`git *`, `git log *`) runs once.
	perCommand := make([][]oracleJob, len(corpus))
	pairs := make([]int, len(corpus))
	var decided sync.WaitGroup
	for w := 0; w < workers; w++ {
		decided.Add(1)
		go func(w int) {
			defer decided.Done()
			for i := w; i < len(corpus); i += workers {
				ran := map[string]bool{}
				for _, r := range rules {
					_, scope, ok := decide(r, corpus[i])
					if !ok {
						continue
					}
					pairs[i]++
					k := fmt.Sprint(scope, r.progs, r.class)
					if !ran[k] {
						ran[k] = true
						perCommand[i] = append(perCommand[i], oracleJob{rule: r, cmd: corpus[i], scope: scope})
					}
				}
			}
		}(w)
	}
	decided.Wait()
	var jobs []oracleJob
	matched, matchedPairs := 0, 0
	for i, js := range perCommand {
		jobs = append(jobs, js...)
		matchedPairs += pairs[i]
		if pairs[i] > 0 {
			matched++
		}
	}
	require.NotEmpty(t, jobs)

	var (
		mu       sync.Mutex
		failures []string
		timedOut int
	)
	ch := make(chan oracleJob)
	var wg sync.WaitGroup
	for _, o := range runners {
		wg.Add(1)
		go func(o *oracleRunner) {
			defer wg.Done()
			for j := range ch {
				bad, killed, err := o.check(j)
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("%q under %q: %v", j.cmd, j.rule.Pattern, err))
				}
				failures = append(failures, bad...)
				if killed {
					timedOut++
				}
				mu.Unlock()
			}
		}(o)
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	ran, restored := 0, 0
	for _, o := range runners {
		ran, restored = ran+o.ran, restored+o.restored
	}
	t.Logf("T13 oracle: %d commands generated, %d matched by some of %d example rules (%d command-rule pairs), %d runs (%d ran their program, %d cut at %s, %d changed the workspace) in %s",
		len(corpus), matched, len(rules), matchedPairs, len(jobs), ran, timedOut, oracleTimeout, restored, time.Since(start).Round(time.Second))
	// Builtins (echo, printf) and programs not installed here start none.
	require.Greater(t, ran, len(jobs)/2, "most matched commands run their program")
	if len(failures) > 0 {
		if len(failures) > 200 {
			failures = append(failures[:200], fmt.Sprintf("... and %d more", len(failures)-200))
		}
		t.Fatalf("the matcher approved %d commands that did more than their rule allows:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// TestMatcherOracleSeesWhatItLooksFor: the oracle's checks flag a program
// outside the rule's set, a write outside the private /tmp, and a changed
// workspace and protected set, on commands that no example rule matches.
func TestMatcherOracleSeesWhatItLooksFor(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		testenv.Unavailable(t, "strace is not installed (Debian: apt-get install strace; scripts/test.sh installs it): the matcher's oracle (T13) traces commands with it")
	}
	o := newOracleRunner(t, strace)
	o.requireTracing(t)
	sortRule := &oracleRule{ExampleRule: approval.ExampleRule{Pattern: "sort *"}, progs: []string{"sort"}, class: approval.ClassPure}
	cases := []struct {
		cmd, scope, want string
	}{
		{"split --filter=cat a.txt", sandbox.ScopeReadOnly, "execs split"},
		{"sort a.txt | cat", sandbox.ScopeWrite, `execs cat, not one of [sort]: `},
		{"sort -o /dev/shm/planted a.txt", sandbox.ScopeReadOnly, `writes outside the private /tmp: `},
		{"sort -o out.txt a.txt", sandbox.ScopeWrite, ""},
		{"sort -o /tmp/out.txt a.txt", sandbox.ScopeReadOnly, ""},
	}
	for _, c := range cases {
		bad, _, err := o.check(oracleJob{rule: sortRule, cmd: c.cmd, scope: c.scope})
		require.NoError(t, err)
		if c.want == "" {
			require.Empty(t, bad, c.cmd)
			continue
		}
		require.NotEmpty(t, bad, c.cmd)
		require.Contains(t, strings.Join(bad, "\n"), c.want, c.cmd)
	}
	// The digests: of the workspace, and of the protected set.
	before := treeDigest(t, o.dir)
	require.NoError(t, os.WriteFile(filepath.Join(o.dir, ".env"), []byte("changed\n"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(o.dir, "a.txt"), 0o600))
	after := treeDigest(t, o.dir)
	require.ElementsMatch(t, []string{".env", "a.txt"}, digestDiff(before, after, false))
	require.Equal(t, []string{".env"}, digestDiff(before, after, true))
}

// decide is the round's decision on command under one example rule: the
// rules approve it (approval.Needs), and it runs with the widest of the
// approving rules' scopes.
func decide(r *oracleRule, command string) (used []approval.Rule, scope string, ok bool) {
	b, _ := json.Marshal(map[string]string{"command": command})
	args, okArgs := tools.Canonical(b)
	if !okArgs {
		return nil, "", false
	}
	v := approval.Needs(approval.Call{Tool: RunCommand, Args: args, Kind: approval.KindCommand},
		approval.Policy{Rules: r.rules, Tables: approval.TablesCurrent})
	if v.Ask || v.Decision != approval.DecisionRule {
		return nil, "", false
	}
	scope = approval.ScopeReadOnly
	for _, u := range v.Rules {
		if u.EffectiveScope() == approval.ScopeWrite {
			scope = approval.ScopeWrite
		}
	}
	return v.Rules, scope, true
}

func canonicalCommand(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	args, ok := tools.Canonical(b)
	require.True(t, ok)
	return args
}

// oracleRunner runs traced commands in one workdir, which it puts back as
// it was after each command that changed it.
type oracleRunner struct {
	tl       *Tools
	dir      string
	pristine string
	strace   string
	trace    *os.File
	out      *os.File
	home     string
	baseline map[string]string
	// ran counts the commands whose trace shows their program run,
	// restored those after which the workdir was put back.
	ran, restored int
}

func newOracleRunner(t *testing.T, strace string) *oracleRunner {
	t.Helper()
	tl, wd := newSandboxed(t, sandbox.Config{})
	o := &oracleRunner{tl: tl, dir: wd.Dir(), strace: strace}
	for name, content := range approval.OracleFiles {
		p := filepath.Join(o.dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	for _, args := range [][]string{
		{"tar", "-cf", "a.tar", "a.txt", "sub/c.txt"},
		{"git", "init", "-q"},
		{"git", "add", "-A"},
		{"git", "-c", "user.name=oracle", "-c", "user.email=oracle@example.com", "commit", "-qm", "start"},
		{"git", "tag", "v1"},
	} {
		c := exec.Command(args[0], args[1:]...)
		c.Dir = o.dir
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(o.dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch HOOK_RAN\n"), 0o755))
	// evil.tar's members would plant a key file, a repository setting
	// that runs a program, and a hook.
	evil := t.TempDir()
	for name, content := range map[string]string{".env": "PLANTED=1\n", ".git/config": "[core]\n\tfsmonitor = touch PLANTED\n",
		".git/hooks/post-commit": "#!/bin/sh\ntouch PLANTED\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(evil, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(evil, name), []byte(content), 0o755))
	}
	out, err := exec.Command("tar", "-C", evil, "-cf", filepath.Join(o.dir, "evil.tar"), ".env", ".git").CombinedOutput()
	require.NoError(t, err, "%s", out)
	o.pristine = filepath.Join(t.TempDir(), "pristine")
	out, err = exec.Command("cp", "-a", o.dir, o.pristine).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// The trace and the output are written through descriptors the
	// command inherits, into files outside the workspace.
	o.trace, err = os.CreateTemp(t.TempDir(), "trace")
	require.NoError(t, err)
	o.out, err = os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	// A command may run as another user (SANDBOX_USER) who reopens it.
	require.NoError(t, o.trace.Chmod(0o666))
	t.Cleanup(func() { o.trace.Close(); o.out.Close() })
	o.home = envValueOf(tl.envFor(true), "HOME")
	o.baseline = treeDigest(t, o.dir)
	return o
}

// requireTracing runs one traced command: where strace cannot trace in the
// sandbox (ptrace not allowed), the oracle cannot run.
func (o *oracleRunner) requireTracing(t *testing.T) {
	t.Helper()
	lines, _, err := o.run("true", sandbox.ScopeReadOnly)
	require.NoError(t, err)
	for _, l := range lines {
		if strings.Contains(l, `execve("/bin/sh"`) && strings.HasSuffix(l, "= 0") {
			return
		}
	}
	out, _ := os.ReadFile(o.out.Name())
	testenv.Unavailable(t, "strace cannot trace a command in the sandbox (is ptrace allowed here? a container needs the ptrace syscall in its seccomp profile): %s %s",
		strings.TrimSpace(string(out)), strings.Join(lines, "\n"))
}

// run runs command as a rule-approved command with scope, under strace,
// and returns the trace's lines.
func (o *oracleRunner) run(command, scope string) (lines []string, killed bool, err error) {
	for _, f := range []*os.File{o.trace, o.out} {
		if err := f.Truncate(0); err != nil {
			return nil, false, err
		}
		if _, err := f.Seek(0, 0); err != nil {
			return nil, false, err
		}
	}
	// The sandbox puts its gate at descriptor 3: the trace is at 4.
	cmd := exec.Command(o.strace, "-f", "-qq", "-e", "trace=execve,execveat,%file", "-o", "/dev/fd/4", "/bin/sh", "-c", command)
	cmd.Env = o.tl.envFor(true)
	cmd.Stdout, cmd.Stderr = o.out, o.out
	cmd.ExtraFiles = []*os.File{o.trace}
	sp, err := o.tl.wrap(cmd, scope, o.strace)
	if err != nil {
		return nil, false, err
	}
	if len(cmd.ExtraFiles) != 2 || cmd.ExtraFiles[1] != o.trace {
		return nil, false, fmt.Errorf("the sandbox passes its own descriptors: the trace is no longer at 4")
	}
	if err := sp.Start(); err != nil {
		return nil, false, err
	}
	done := make(chan struct{})
	var cut atomic.Bool
	go func() {
		select {
		case <-done:
		case <-time.After(oracleTimeout):
			cut.Store(true)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	_ = cmd.Wait()
	close(done)
	sp.Finish()
	killed = cut.Load()
	b, err := os.ReadFile(o.trace.Name())
	if err != nil {
		return nil, killed, err
	}
	return joinResumed(string(b)), killed, nil
}

// check runs a job and returns what it did beyond its rule, one line each
// naming the command and the syscall.
func (o *oracleRunner) check(j oracleJob) (bad []string, killed bool, err error) {
	lines, killed, err := o.run(j.cmd, j.scope)
	if err != nil {
		return nil, killed, err
	}
	if ranProgram(lines, j.rule.progs) {
		o.ran++
	}
	tell := func(format string, args ...any) {
		bad = append(bad, fmt.Sprintf("%q under %q (scope %s): ", j.cmd, j.rule.Pattern, j.scope)+fmt.Sprintf(format, args...))
	}
	for _, v := range traceViolations(lines, j.rule.progs, j.rule.class == approval.ClassRunsWorkspaceCode, j.scope == sandbox.ScopeReadOnly, o.home) {
		tell("%s", v)
	}
	after := treeDigestErr(o.dir)
	if j.scope == sandbox.ScopeReadOnly {
		for _, p := range digestDiff(o.baseline, after, false) {
			tell("changed the workspace: %s", p)
		}
	}
	for _, p := range digestDiff(o.baseline, after, true) {
		tell("changed the protected set: %s", p)
	}
	if !mapsEqual(o.baseline, after) {
		if err := o.restore(); err != nil {
			return bad, killed, err
		}
	}
	return bad, killed, nil
}

// restore puts the workdir back as it was made.
func (o *oracleRunner) restore() error {
	es, err := os.ReadDir(o.dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := os.RemoveAll(filepath.Join(o.dir, e.Name())); err != nil {
			return err
		}
	}
	if out, err := exec.Command("cp", "-a", o.pristine+"/.", o.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("restore: %v: %s", err, out)
	}
	o.baseline = treeDigestErr(o.dir)
	o.restored++
	return nil
}

// ranProgram reports whether a trace shows a program of progs started.
func ranProgram(lines, progs []string) bool {
	for _, l := range lines {
		m := syscallLine.FindStringSubmatch(l)
		if m == nil || m[3] != "0" || (m[1] != "execve" && m[1] != "execveat") {
			continue
		}
		if p := quoted.FindStringSubmatch(m[2]); p != nil && slices.Contains(progs, filepath.Base(p[1])) {
			return true
		}
	}
	return false
}

var (
	syscallLine = regexp.MustCompile(`^\d+\s+([a-z0-9_]+)\((.*)\)\s+= (-?\d+|\?)`)
	quoted      = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	writeOpen   = regexp.MustCompile(`\bO_(WRONLY|RDWR|CREAT|TRUNC)\b`)
)

// writeCalls are the write-class calls of T13, beside the opens that write.
var writeCalls = map[string]bool{
	"creat": true, "rename": true, "renameat": true, "renameat2": true, "unlink": true, "unlinkat": true,
	"mkdir": true, "mkdirat": true, "rmdir": true, "link": true, "linkat": true, "symlink": true, "symlinkat": true,
	"truncate": true, "chmod": true, "fchmodat": true, "fchmodat2": true, "chown": true, "lchown": true, "fchownat": true,
	"utimensat": true, "utime": true, "utimes": true, "futimesat": true, "mknod": true, "mknodat": true,
}

// joinResumed splits a trace into lines, a call that another process
// interrupted joined with its resumption.
func joinResumed(trace string) []string {
	var out []string
	pending := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(trace))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		pid, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimLeft(rest, " ")
		if head, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			pending[pid] = head
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			if _, tail, ok := strings.Cut(rest, " resumed>"); ok {
				l = pid + " " + pending[pid] + tail
				delete(pending, pid)
			}
		}
		out = append(out, l)
	}
	return out
}

// traceViolations are the lines of a trace that go beyond a rule: a
// successful execve of a program outside progs (after the first, the
// command's shell; unchecked when anyCode), and with readOnly a successful
// write-class call outside the private /tmp and home.
func traceViolations(lines, progs []string, anyCode, readOnly bool, home string) []string {
	var bad []string
	shell := true
	for _, l := range lines {
		m := syscallLine.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[3], "-") || m[3] == "?" {
			continue
		}
		name, args := m[1], m[2]
		paths := quoted.FindAllStringSubmatch(args, -1)
		switch {
		case name == "execve" || name == "execveat":
			if len(paths) == 0 {
				bad = append(bad, "execs an unnamed program: "+l)
				continue
			}
			prog := filepath.Base(paths[0][1])
			if shell {
				shell = false
				if paths[0][1] == "/bin/sh" {
					continue
				}
			}
			if !anyCode && !slices.Contains(progs, prog) {
				bad = append(bad, fmt.Sprintf("execs %s, not one of %v: %s", prog, progs, l))
			}
		case !readOnly:
		case writeCalls[name] || ((name == "open" || name == "openat" || name == "openat2") && writeOpen.MatchString(args)):
			var ps []string
			for _, p := range paths {
				ps = append(ps, p[1])
			}
			if strings.HasPrefix(name, "symlink") && len(ps) > 0 {
				ps = ps[len(ps)-1:] // the link, not what it says
			}
			if strings.HasPrefix(name, "open") && len(ps) > 0 {
				ps = ps[:1]
			}
			if len(ps) == 0 {
				bad = append(bad, "writes a file it names by descriptor: "+l)
			}
			for _, p := range ps {
				if !privatePath(p, home) {
					bad = append(bad, "writes outside the private /tmp: "+l)
					break
				}
			}
		}
	}
	return bad
}

// privatePath: the command's private /tmp and home (a folder of it), and
// its own standard streams and the null device, which are no files of the
// workspace.
func privatePath(p, home string) bool {
	switch {
	case p == "/tmp" || strings.HasPrefix(p, "/tmp/"):
		return true
	case home != "" && home != "/" && (p == home || strings.HasPrefix(p, home+"/")):
		return true
	case p == "/dev/null" || p == "/dev/tty" || p == "/dev/stdout" || p == "/dev/stderr":
		return true
	case strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/"):
		return true
	}
	return false
}

// protectedRel reports whether a path relative to the workdir lies in the
// protected set of T12.
func protectedRel(rel string) bool {
	for _, c := range strings.Split(rel, "/") {
		if c == ".git" || c == ".toolround" || c == ".gitattributes" || c == ".gitmodules" ||
			strings.HasPrefix(c, ".env") || strings.HasSuffix(c, ".pem") || strings.HasPrefix(c, "id_") {
			return true
		}
	}
	return false
}

// treeDigest is, for every path under dir, a digest of its type, mode,
// modification time and contents (a link's target).
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	d := treeDigestErr(dir)
	require.NotContains(t, d, "!error")
	return d
}

func treeDigestErr(dir string) map[string]string {
	d := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		s := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			s += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			s += " -> " + target
		}
		d[rel] = s
		return nil
	})
	if err != nil {
		d["!error"] = err.Error()
	}
	return d
}

// digestDiff lists the paths whose digest differs (that were added,
// removed or changed); with protected, only the paths of the protected set
// that were there before.
func digestDiff(before, after map[string]string, protected bool) []string {
	var out []string
	for p, b := range before {
		if protected && !protectedRel(p) {
			continue
		}
		if a, ok := after[p]; !ok {
			out = append(out, p+" (removed)")
		} else if a != b {
			out = append(out, p)
		}
	}
	if !protected {
		for p := range after {
			if _, ok := before[p]; !ok {
				out = append(out, p+" (added)")
			}
		}
	}
	sort.Strings(out)
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func envValueOf(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
