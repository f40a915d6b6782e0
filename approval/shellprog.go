package approval

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Per-program rules of the shell walk: the programs that never match, the
// arguments of those that match only with some, the variables a command
// may set, and the programs that run what they read from stdin.

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

// programRules check the arguments of programs that run another program or
// write where the script does not show with some of them; a program with a
// rule matches a pattern only when its rule accepts the arguments.
var programRules = map[string]func(args []word) bool{
	"git":    gitOK,
	"find":   findOK,
	"tar":    dangerArgsOK("tar"),
	"rsync":  dangerArgsOK("rsync"),
	"zip":    dangerArgsOK("zip"),
	"ssh":    dangerArgsOK("ssh"),
	"scp":    dangerArgsOK("scp"),
	"sftp":   dangerArgsOK("sftp"),
	"wget":   dangerArgsOK("wget"),
	"curl":   dangerArgsOK("curl"),
	"test":   testOK,
	"[":      testOK,
	"printf": printfOK,
	"cd":     cdOK,
	"pushd":  cdOK,
}

// dangerArgsOK is argsOK for one program of argDanger.
func dangerArgsOK(prog string) func(args []word) bool {
	return func(args []word) bool { return argsOK(prog, args) }
}

// testOK refuses test/[ with -v or -R: bash evaluates their subscripts.
func testOK(args []word) bool {
	return literal(args) && !hasWord(args, "-v", "-R")
}

// printfOK refuses printf -v: bash evaluates its subscript.
func printfOK(args []word) bool {
	if !literal(args) {
		return false
	}
	for _, a := range args {
		if strings.HasPrefix(a.val, "-v") {
			return false
		}
	}
	return true
}

// cdOK takes one literal folder inside the workdir, outside any .git folder.
func cdOK(args []word) bool {
	return len(args) == 1 && literal(args) && insideWorkdir(args[0].val) && !inGitDir(args[0].val) && !strings.HasPrefix(args[0].val, "-")
}
