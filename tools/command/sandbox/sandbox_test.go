package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
)

// newBwrap is a bubblewrap sandbox on a fresh workdir; without bubblewrap
// the test fails under CI and is skipped elsewhere.
func newBwrap(t *testing.T, cfg Config) (*Sandbox, string) {
	t.Helper()
	wd := t.TempDir()
	cfg.Mode = ModeBwrap
	s, err := New(cfg, wd)
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(s.Close)
	require.Equal(t, ModeBwrap, s.Mode())
	return s, wd
}

type outcome struct {
	out  string
	code int
	cut  []string
}

// runLimit bounds one command of these tests, so that a sandbox that fails
// to end what a command leaves fails its test instead of hanging the package.
const runLimit = time.Minute

func run(t *testing.T, s *Sandbox, wd, script string, env ...string) outcome {
	t.Helper()
	return runIn(t, s, wd, "", script, env...)
}

// runIn runs script in workspace, a folder inside the workdir that is all
// the command sees of it ("" for the whole workdir), starting in wd.
func runIn(t *testing.T, s *Sandbox, wd, workspace, script string, env ...string) outcome {
	t.Helper()
	return runRoom(t, s, wd, workspace, -1, script, env...)
}

// runRoom is runIn for a workspace with room bytes left (WrapInRoom).
func runRoom(t *testing.T, s *Sandbox, wd, workspace string, room int64, script string, env ...string) outcome {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	// A process left holding the output must not hang the test either.
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = wd
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := s.WrapInRoom(cmd, workspace, room, "")
	require.NoError(t, err)
	require.NoError(t, p.Start())
	err = cmd.Wait()
	require.NoError(t, ctx.Err(), "the command did not end within %s: %s", runLimit, &out)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return outcome{out: out.String(), code: code, cut: p.Finish()}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{EnvMode: "bwrap", EnvNetwork: "host", EnvCPU: "10", EnvMemory: "512", EnvProcs: "unlimited", EnvReadOnly: "/opt:/srv/x/"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, Config{Mode: ModeBwrap, Network: NetworkHost, CPUSeconds: 10, MemoryBytes: 512 << 20, MaxProcs: -1, ReadOnly: []string{"/opt", "/srv/x"}}, c)

	for k, v := range map[string]string{EnvMode: "docker", EnvNetwork: "bridge", EnvCPU: "0", EnvMemory: "-5", EnvProcs: "many", EnvReadOnly: "opt", EnvUser: "0"} {
		_, err := ConfigFromEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		require.Error(t, err, "%s=%s", k, v)
		require.Contains(t, err.Error(), k)
	}
}

func TestResolveUser(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		uid, gid uint32
		err      string
	}{
		{"65000", 65000, 65000, ""},
		{"65000:65001", 65000, 65001, ""},
		{"nobody", 65534, 65534, ""},
		{"nobody:100", 65534, 100, ""},
		{"0", 0, 0, "must not run as root"},
		{"65000:0", 0, 0, "must not run as root"},
		{"root", 0, 0, "must not run as root"},
		{"65000:staff", 0, 0, "want a user name or uid[:gid]"},
		{"no-such-user-here", 0, 0, "no-such-user-here"},
	} {
		uid, gid, err := resolveUser(tc.spec)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.spec)
			require.ErrorContains(t, err, EnvUser, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		require.Equal(t, [2]uint32{tc.uid, tc.gid}, [2]uint32{uid, gid}, tc.spec)
	}
	// The default is a uid of its own: no account may have it.
	uid, gid, err := resolveUser("")
	if _, lookErr := user.LookupId(strconv.Itoa(DefaultUserID)); lookErr == nil {
		require.ErrorContains(t, err, "belongs to the account")
	} else {
		require.NoError(t, err)
		require.Equal(t, [2]uint32{DefaultUserID, DefaultUserID}, [2]uint32{uid, gid})
	}
}

func TestNoneRunsUnchanged(t *testing.T) {
	s, err := New(Config{Mode: ModeNone}, t.TempDir())
	require.NoError(t, err)
	require.Equal(t, ModeNone, s.Mode())
	require.Equal(t, "none", s.Label())
	require.False(t, s.Fallback())
	o := run(t, s, t.TempDir(), fmt.Sprintf("test -r /proc/%d/environ && echo visible", os.Getpid()))
	require.Equal(t, "visible\n", o.out)
}

func TestMissingBwrap(t *testing.T) {
	_, err := New(Config{Mode: ModeBwrap, Bwrap: "no-such-bwrap"}, t.TempDir())
	require.ErrorContains(t, err, "SANDBOX=bwrap, but bubblewrap cannot run commands here")
	require.NotContains(t, err.Error(), "\n")

	s, err := New(Config{Mode: ModeAuto, Bwrap: "no-such-bwrap"}, t.TempDir())
	require.NoError(t, err)
	require.Equal(t, ModeNone, s.Mode())
	require.True(t, s.Fallback())
	require.Contains(t, s.Reason(), "UNCONFINED")
}

func TestBwrapConfines(t *testing.T) {
	outside := t.TempDir()
	key := filepath.Join(outside, "worker.key")
	require.NoError(t, os.WriteFile(key, []byte("KEY-CONTENT"), 0o600))
	s, wd := newBwrap(t, Config{Hide: []string{key}})
	require.NoError(t, os.WriteFile(filepath.Join(wd, ".toolround", "state"), []byte("v"), 0o644))

	o := run(t, s, wd, "echo in > inside.txt && cat inside.txt")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "in\n", o.out)

	checks := map[string]string{
		"write outside":     "echo x > " + filepath.Join(outside, "escaped"),
		"write etc":         "echo x > /etc/escaped",
		"write reserved":    "echo x > .toolround/state",
		"new reserved file": "echo x > .toolround/new",
		"remove reserved":   "rm -rf .toolround",
		"worker environ":    fmt.Sprintf("cat /proc/%d/environ", os.Getpid()),
		"shadow":            "cat /etc/shadow",
	}
	for name, script := range checks {
		o := run(t, s, wd, script)
		require.NotEqual(t, 0, o.code, "%s succeeded: %s", name, o.out)
	}
	o = run(t, s, wd, "cat .toolround/state; ls -A ~ | wc -l; echo t > /tmp/t && cat /tmp/t")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "v0\nt\n", strings.ReplaceAll(o.out, "\n0\n", "0\n"))
	_, err := os.Stat(filepath.Join(outside, "escaped"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestBwrapEndsLeftoverProcesses(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	args := fmt.Sprintf("sleep %d", 100000+os.Getpid())
	t.Cleanup(func() {
		for _, pid := range pidsByArgs(args) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// Each leftover runs before the command returns.
	o := run(t, s, wd, "setsid sh -c 'touch s1; exec "+args+"' >/dev/null 2>&1 </dev/null & "+
		"nohup sh -c 'touch s2; exec "+args+"' >/dev/null 2>&1 </dev/null & "+
		"(sh -c 'touch s3; exec "+args+"' >/dev/null 2>&1 </dev/null &) ; "+
		"until [ -e s1 ] && [ -e s2 ] && [ -e s3 ] && [ $(ps -eo args | grep -cx '"+args+"') = 3 ]; do sleep 0.01; done; echo started")
	require.Equal(t, "started\n", o.out)
	// The namespace ended with the shell: none of them runs on.
	out, _ := exec.Command("sh", "-c", "ps -eo args | grep -cx '"+args+"'").Output()
	require.Equal(t, "0\n", string(out))
}

func TestBwrapLimits(t *testing.T) {
	s, wd := newBwrap(t, Config{MaxProcs: 20, MemoryBytes: 64 << 20, CPUSeconds: 1, FileSizeBytes: 1 << 20})
	switch {
	case s.pids != nil:
		o := run(t, s, wd, "for i in $(seq 40); do sleep 5 & done; wait")
		require.NotEmpty(t, o.cut, o.out)
		require.Contains(t, o.cut[0], "cut by the process limit")
	case s.hasRlimit(rlimitNproc):
		// RLIMIT_NPROC (a worker that is not root, without a pids cgroup):
		// the forks past the limit fail; no cgroup counts them.
		// dash gives up at the first fork that fails; the files say how many ran.
		run(t, s, wd, "for i in $(seq 40); do (touch f.$i; sleep 2) & done; wait")
		started, err := filepath.Glob(filepath.Join(wd, "f.*"))
		require.NoError(t, err)
		require.NotEmpty(t, started)
		require.Less(t, len(started), 40, "every process started")
	default:
		t.Log("no process limit here:", s.Warnings())
	}
	o := run(t, s, wd, "head -c 3000000 /dev/zero > big")
	require.Equal(t, 128+int(syscall.SIGXFSZ), o.code, o.out)
	require.Contains(t, strings.Join(o.cut, "\n"), "cut by the file size limit")

	o = run(t, s, wd, "exec sh -c 'while :; do :; done'")
	require.Equal(t, 128+int(syscall.SIGXCPU), o.code, o.out)
	require.Contains(t, strings.Join(o.cut, "\n"), "cut by the CPU time limit")

	if s.memory != nil {
		// tail -c keeps the last 100 MB of a pipe in memory: it reaches
		// the 64 MB limit in a fraction of the 1 s of CPU time allowed.
		o = run(t, s, wd, "head -c 100000000 /dev/zero | tail -c 100000000 >/dev/null")
		require.NotEqual(t, 0, o.code, o.out)
		require.Contains(t, strings.Join(o.cut, "\n"), "cut by the memory limit")
	}
}

// newBwrapAsUser is a bubblewrap sandbox with no pids cgroup, run by a
// root worker, so that commands run as the unprivileged user; its workdir
// holds a file and a folder of the worker's.
func newBwrapAsUser(t *testing.T, cfg Config) (*Sandbox, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("commands change user only under a root worker")
	}
	parent := t.TempDir()
	// The user needs search access to the folders above the workdir
	// (t.TempDir makes them for the worker's user alone).
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o711))
	require.NoError(t, os.Chmod(parent, 0o711))
	wd := filepath.Join(parent, "wd")
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "existing"), []byte("old\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "sub", "kept"), []byte("kept\n"), 0o644))
	cfg.Mode, cfg.NoPidsCgroup = ModeBwrap, true
	s, err := New(cfg, wd)
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(s.Close)
	require.Nil(t, s.pids)
	require.NotNil(t, s.user, "commands do not change user: %v", s.Warnings())
	return s, wd
}

func TestBwrapWithoutPidsCgroupRunsAsUser(t *testing.T) {
	s, wd := newBwrapAsUser(t, Config{MaxProcs: 20})
	require.Contains(t, s.Reason(), "at most 20 more processes of the commands' user (RLIMIT_NPROC; no pids cgroup, so commands run as uid 65533, gid 65533)")
	require.Contains(t, strings.Join(s.Warnings(), "\n"), "commands run as uid 65533, gid 65533, whose processes RLIMIT_NPROC bounds")

	o := run(t, s, wd, "id -u; id -g; id -G")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "65533\n65533\n65533\n", o.out, "the command runs as root or keeps groups")

	// The workdir is the command's to write: new files, the worker's
	// files and folders, its /tmp and home.
	o = run(t, s, wd, "set -e; echo new > new.txt; echo more >> existing; echo s > sub/x; echo k >> sub/kept; "+
		"mkdir -p deep/er && echo d > deep/er/f; echo t > /tmp/t; echo h > ~/h; cat existing")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "old\nmore\n", o.out)
	// The worker reads and changes what the command wrote.
	b, err := os.ReadFile(filepath.Join(wd, "deep", "er", "f"))
	require.NoError(t, err)
	require.Equal(t, "d\n", string(b))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "new.txt"), []byte("worker\n"), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(wd, "deep")))
	// What the worker's file tools write between commands (a new folder, a
	// file replaced with mode 0644) is the next command's to change too.
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "tool", "made"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "tool", "made", "f"), []byte("a\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(wd, "existing")))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "existing"), []byte("edited\n"), 0o644))
	o = run(t, s, wd, "set -e; echo b >> tool/made/f; echo c > tool/made/g; echo again >> existing; cat new.txt")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "worker\n", o.out)

	// Nothing else got write access: the modes of the worker's files are
	// as they were, other users still only read them.
	fi, err := os.Stat(filepath.Join(wd, "sub", "kept"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o4), fi.Mode().Perm()&0o7)
	// The reserved folder stays the worker's, and read-only.
	o = run(t, s, wd, "echo x > .toolround/planted")
	require.NotEqual(t, 0, o.code, o.out)
}

// TestBwrapWithoutPidsCgroupKeyFileInWorkdir: a worker key file that lies
// in the workdir stays hidden, and gets no grant for the commands' user.
func TestBwrapWithoutPidsCgroupKeyFileInWorkdir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("commands change user only under a root worker")
	}
	parent := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o711))
	require.NoError(t, os.Chmod(parent, 0o711))
	wd := filepath.Join(parent, "wd")
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "conf"), 0o755))
	key := filepath.Join(wd, "conf", "secret.key")
	require.NoError(t, os.WriteFile(key, []byte("KEY-CONTENT"), 0o600))
	s, err := New(Config{Mode: ModeBwrap, NoPidsCgroup: true, Hide: []string{key}}, wd)
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(s.Close)
	require.NotNil(t, s.user, s.Warnings())
	o := run(t, s, wd, "cat conf/secret.key; echo x > conf/other")
	require.Equal(t, 0, o.code, o.out)
	require.NotContains(t, o.out, "KEY-CONTENT")
	require.FileExists(t, filepath.Join(wd, "conf", "other"))
	require.False(t, hasUserACL(t, key, s.user.uid), "the key file was granted to the commands' user")
}

func TestBwrapWithoutPidsCgroupBoundsForkBomb(t *testing.T) {
	// RLIMIT_NPROC counts every process of the commands' user on the
	// machine, so the commands other tests start meanwhile as DefaultUserID
	// used up this one's 20 under a full parallel run: a uid of its own.
	const uid = DefaultUserID - 11
	// What an earlier run of this test left is gone first: the limit
	// counts from the user's processes when the command starts.
	require.Eventually(t, func() bool { return userTasks(uid) == 0 }, 10*time.Second, 20*time.Millisecond)
	s, wd := newBwrapAsUser(t, Config{MaxProcs: 20, User: strconv.Itoa(uid)})
	// Each background job is one process that forks nothing more (the
	// file is made by a redirection, and the job becomes sleep by exec),
	// so that every job that started left its file however quickly the
	// loop outruns the jobs, and lives until the loop is over, however
	// slowly it runs; the files say how many ran at once. kill, wait and
	// the loop are built in: dash exits at a fork that fails.
	o := run(t, s, wd, "for i in $(seq 40); do (: > f.$i; exec sleep 60) & p=\"$p $!\"; done; kill $p; wait")
	started, err := filepath.Glob(filepath.Join(wd, "f.*"))
	require.NoError(t, err)
	require.NotEmpty(t, started, o.out)
	// The limit is 20 more than the user ran when the command started,
	// which counts the command's own first processes; one of bubblewrap's
	// that ends during set-up leaves its place to a job, so a loaded
	// machine sees one or two jobs past 20, never the 40 asked for.
	require.LessOrEqual(t, len(started), 22, "more processes started than the limit")
	// A fork bomb ends with the call: each process forks until the limit
	// refuses, and the namespace ends with the shell. The shell forks
	// once, before the bomb holds any process (dash exits at a fork that
	// fails), then only waits and echoes, which are built in; the bomb
	// runs for a second or until its starter's own fork is refused.
	done := make(chan outcome, 1)
	go func() { done <- run(t, s, wd, "bomb() { bomb | bomb & }; (bomb; sleep 1) & wait; echo survived") }()
	select {
	case o = <-done:
		require.Contains(t, o.out, "survived", o.out)
		require.Contains(t, o.out, "Cannot fork", "no fork was refused")
	case <-time.After(30 * time.Second):
		t.Fatal("the fork bomb did not end")
	}
	// And the sandbox still works after it.
	o = run(t, s, wd, "echo ok")
	require.Equal(t, "ok\n", o.out)
}

func TestWithUserKeepsOthersRights(t *testing.T) {
	const uid = 65533
	u := func(perm uint16, id uint32) aclEntry { return aclEntry{aclUser, perm, id} }
	obj := func(tag, perm uint16) aclEntry { return aclEntry{tag, perm, aclUndefined} }
	for _, tc := range []struct {
		name    string
		in      []aclEntry
		perm    uint16
		want    []aclEntry
		changed bool
	}{
		{"from mode 0644", aclFromMode(0o644), 6,
			[]aclEntry{obj(aclUserObj, 6), u(6, uid), obj(aclGroupObj, 4), obj(aclMask, 6), obj(aclOther, 4)}, true},
		{"already granted", []aclEntry{obj(aclUserObj, 7), u(7, uid), obj(aclGroupObj, 5), obj(aclMask, 7), obj(aclOther, 5)}, 7,
			[]aclEntry{obj(aclUserObj, 7), u(7, uid), obj(aclGroupObj, 5), obj(aclMask, 7), obj(aclOther, 5)}, false},
		// chmod 0644 of a file with an ACL narrows the mask: raising it again
		// must not give the owning group or another user what the mask denied.
		{"narrowed mask", []aclEntry{obj(aclUserObj, 6), u(7, 1000), u(7, uid), obj(aclGroupObj, 7), aclEntry{aclGroup, 7, 50}, obj(aclMask, 4), obj(aclOther, 4)}, 6,
			[]aclEntry{obj(aclUserObj, 6), u(4, 1000), u(6, uid), obj(aclGroupObj, 4), aclEntry{aclGroup, 4, 50}, obj(aclMask, 6), obj(aclOther, 4)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := withUser(tc.in, uid, tc.perm)
			require.Equal(t, tc.changed, changed)
			require.Equal(t, tc.want, got)
			back, err := parseACL(encodeACL(got))
			require.NoError(t, err)
			require.Equal(t, got, back)
		})
	}
}

// hasUserACL reports whether path's ACL names uid.
func hasUserACL(t *testing.T, path string, uid uint32) bool {
	t.Helper()
	buf := make([]byte, 1024)
	n, err := syscall.Getxattr(path, xattrACLAccess, buf)
	if errors.Is(err, syscall.ENODATA) {
		return false
	}
	require.NoError(t, err)
	acl, err := parseACL(buf[:n])
	require.NoError(t, err)
	for _, e := range acl {
		if e.tag == aclUser && e.id == uid {
			return true
		}
	}
	return false
}

// TestGrantKeepsToTheWorkdir: the worker, as root, gives the commands'
// user the workdir; a hard link to a file outside must not carry that
// grant out, and neither may a folder a command swaps for a symbolic link
// while the worker walks the tree.
func TestGrantKeepsToTheWorkdir(t *testing.T) {
	s, wd := newBwrapAsUser(t, Config{})
	outside := filepath.Join(filepath.Dir(wd), "outside")
	require.NoError(t, os.Mkdir(outside, 0o755))
	// Files outside with the names of files in the folder the command swaps.
	var victims []string
	for i := range 100 {
		victims = append(victims, filepath.Join(outside, fmt.Sprintf("f%d", i)))
		require.NoError(t, os.WriteFile(victims[i], []byte("root's\n"), 0o644))
	}
	victim := victims[0]
	granted := func() bool {
		for _, v := range victims {
			if hasUserACL(t, v, s.user.uid) {
				return true
			}
		}
		return false
	}

	// A link made where links to others' files are allowed
	// (fs.protected_hardlinks=0), or by the worker's tools.
	require.NoError(t, os.Link(victim, filepath.Join(wd, "linked")))
	o := run(t, s, wd, "echo owned >> linked")
	require.NotEqual(t, 0, o.code, o.out)
	require.False(t, hasUserACL(t, victim, s.user.uid), "the grant reached a file outside through a hard link")
	require.NoError(t, os.Remove(filepath.Join(wd, "linked")))

	// The command swaps d between a folder and a link to outside while
	// the worker walks the tree again and again.
	require.NoError(t, os.WriteFile(filepath.Join(wd, "stop"), nil, 0o644))
	o = run(t, s, wd, "mkdir d && (cd d && touch $(seq -f f%g 0 99)) && ln -s "+outside+" dl && rm stop")
	require.Equal(t, 0, o.code, o.out)
	// renameat2 with RENAME_EXCHANGE swaps the two at once: d is never
	// missing, a folder one moment and a link the next.
	renameat2 := map[string]int{"amd64": 316, "arm64": 276}[runtime.GOARCH]
	if renameat2 == 0 {
		t.Skip("renameat2's number is not known here")
	}
	cmd := exec.Command("perl", "-e", fmt.Sprintf(`my ($a, $b, $n) = ("d", "dl", 0); `+
		`while (! -e "stop") { syscall(%d, -100, $a, -100, $b, 2) == 0 or die "renameat2: $!"; `+
		`if (++$n == 1) { open(my $f, ">", "swapping") or die "swapping: $!"; close $f } } print "$n swaps"`, renameat2))
	cmd.Dir = wd
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var swaps bytes.Buffer
	cmd.Stdout, cmd.Stderr = &swaps, &swaps
	p, err := s.Wrap(cmd)
	require.NoError(t, err)
	require.NoError(t, p.Start())
	stop := func() {
		require.NoError(t, os.WriteFile(filepath.Join(wd, "stop"), nil, 0o644))
		_ = cmd.Wait()
		p.Finish()
	}
	// The grants race the swaps only once they have begun (a loaded
	// machine can start the command after 300 grants are done).
	require.Eventually(t, func() bool {
		_, err := os.Lstat(filepath.Join(wd, "swapping"))
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the command never began to swap")
	for i := 0; i < 300 && !granted(); i++ {
		s.user.mu.Lock()
		s.user.since = time.Time{}
		s.user.mu.Unlock()
		require.NoError(t, s.user.grant())
	}
	stop()
	require.Regexp(t, `^[1-9][0-9]* swaps$`, swaps.String(), "the command did not swap")
	require.False(t, granted(), "the grant followed a symbolic link out of the workdir")
}

// W3: with a room, a command's /tmp and home are one tmpfs of that size:
// files there, each under the room, cannot add up past it; what fits is
// written. The same holds when commands run as SANDBOX_USER.
func TestRoomBoundsTmpAndHome(t *testing.T) {
	check := func(t *testing.T, s *Sandbox, wd string) {
		if !s.sizedTmp {
			t.Skip("bubblewrap cannot size a tmpfs here")
		}
		const fill = "for i in 1 2 3 4 5 6; do head -c 300000 /dev/zero > %s/f$i || exit 7; done"
		for _, dir := range []string{"/tmp", "~"} {
			o := runRoom(t, s, wd, "", 1<<20, fmt.Sprintf(fill, dir))
			require.Equal(t, 7, o.code, "%s took 1.8 MB with 1 MB of room: %s", dir, o.out)
		}
		o := runRoom(t, s, wd, "", 1<<20, "head -c 300000 /dev/zero > /tmp/a && head -c 300000 /dev/zero > ~/b && ls -ld /tmp && echo fits")
		require.Equal(t, 0, o.code, o.out)
		require.Contains(t, o.out, "drwxrwxrwt")
		require.Contains(t, o.out, "fits")
		o = runRoom(t, s, wd, "", 0, "echo x > /tmp/a")
		require.NotEqual(t, 0, o.code, "a workspace without room leaves no room in /tmp: %s", o.out)
	}
	t.Run("worker's user", func(t *testing.T) {
		s, wd := newBwrap(t, Config{})
		check(t, s, wd)
	})
	t.Run("SANDBOX_USER", func(t *testing.T) {
		s, wd := newBwrapAsUser(t, Config{MaxProcs: 20})
		check(t, s, wd)
	})
}
