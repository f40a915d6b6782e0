package sandbox

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The git fence (T12): a command a rule approved runs git only over
// configuration that names no program. A repository's own config (its
// config and config.worktree, and what they include) can name programs
// under names git does not fix (diff.NAME.textconv, filter.NAME.clean,
// merge.NAME.driver, alias.NAME, ...), which no setting on git's command
// line can override, so the fence works on the repositories themselves:
//
//   - every git directory the workspace holds when the command starts (a
//     .git folder and what it holds, submodules' and worktrees' included,
//     or any folder holding HEAD and objects) has each of its config files
//     replaced, for the command, by a copy of it that keeps only the
//     settings of sanitisedKeep, none of which runs a program; the copy is
//     bound read-only over the file;
//   - git uses no other repository: GIT_TEST_ASSUME_DIFFERENT_OWNER makes
//     it take every repository for another user's (git 2.35.2 and later),
//     which it then uses only when safe.directory, given as on its
//     command line, names it; it names the repositories found at the start
//     and nothing else. A repository the command makes while it runs (`tar
//     xf evil.tar && git -C w2 diff`), or a concurrent one makes, is
//     refused ("detected dubious ownership"), or taken as no repository
//     (a concurrent command that moves one of those repositories away and
//     puts another at its path is not kept out: the folders are bound
//     only in this command's sandbox);
//   - under ScopeWrite each folder from the workspace down to each of those
//     repositories is bound over itself, so that the command can neither
//     move nor remove it to put a repository of its own in its place.
//
// What the repositories' .gitattributes name (diff=NAME, filter=NAME,
// merge=NAME) then has no program: git shows, stores and merges the files
// as they are.

// gitFence is what scanGit found under root.
type gitFence struct {
	root string
	// repos are the folders git may use as a repository's top: the
	// folder holding a .git, or a bare repository.
	repos []string
	// configs are the config files of their git directories.
	configs []string
	// pointers are the files that name another git directory, whose
	// config git reads too: .git files (gitdir: PATH) and commondir.
	pointers []string
}

// gitConfigNames are the files of a git directory that git reads as
// configuration.
var gitConfigNames = map[string]bool{"config": true, "config.worktree": true}

// gitSkip are folders of a git directory (a folder holding HEAD) that hold
// no configuration and may be large; a submodule's git directory may have
// such a name (.git/modules/refs) and is walked.
var gitSkip = map[string]bool{"objects": true, "refs": true, "logs": true, "lfs": true, "rr-cache": true}

// scanGit walks root for the repositories and git directories it holds
// now. Links are not followed; a folder the worker cannot read is skipped
// (git then uses no repository there).
func scanGit(root string) *gitFence {
	g := &gitFence{root: root}
	inGitDir := "" // the git directory being walked
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if inGitDir != "" && !strings.HasPrefix(p, inGitDir+"/") {
			inGitDir = ""
		}
		name := d.Name()
		if inGitDir != "" {
			switch {
			case d.IsDir() && gitSkip[name] && isFile(filepath.Join(filepath.Dir(p), "HEAD")):
				return filepath.SkipDir
			case !d.IsDir() && gitConfigNames[name]:
				g.configs = append(g.configs, p)
			case !d.IsDir() && name == "commondir":
				g.pointers = append(g.pointers, p)
			}
			return nil
		}
		if strings.EqualFold(name, ".git") && p != root {
			g.repos = append(g.repos, filepath.Dir(p))
			if d.IsDir() {
				inGitDir = p
				g.configsOf(p)
			} else if d.Type().IsRegular() {
				g.pointers = append(g.pointers, p)
			}
			return nil
		}
		if d.IsDir() && isFile(filepath.Join(p, "HEAD")) && (isDir(filepath.Join(p, "objects")) || isFile(filepath.Join(p, "commondir"))) {
			g.repos = append(g.repos, p)
			inGitDir = p
			g.configsOf(p)
		}
		return nil
	})
	g.follow()
	return g
}

// follow adds the configs of the git directories that .git files and
// commondir files name inside root, which need not look like git
// directories themselves (a common directory has no HEAD), following
// their own commondir in turn, a few steps deep.
func (g *gitFence) follow() {
	seen := map[string]bool{}
	todo := g.pointers
	for step := 0; step < 4 && len(todo) > 0; step++ {
		var next []string
		for _, ptr := range todo {
			b, err := os.ReadFile(ptr)
			if err != nil || len(b) > 4096 {
				continue
			}
			target := strings.TrimSpace(string(b))
			if filepath.Base(ptr) != "commondir" {
				var ok bool
				if target, ok = strings.CutPrefix(target, "gitdir:"); !ok {
					continue
				}
				target = strings.TrimSpace(target)
			}
			if !filepath.IsAbs(target) {
				// Relative to the folder holding the .git file, or to
				// the git directory holding commondir.
				target = filepath.Join(filepath.Dir(ptr), target)
			}
			target = filepath.Clean(target)
			if seen[target] || (target != g.root && !strings.HasPrefix(target, g.root+"/")) {
				continue
			}
			seen[target] = true
			g.configsOf(target)
			if c := filepath.Join(target, "commondir"); isFile(c) {
				next = append(next, c)
			}
		}
		todo = next
	}
}

// configsOf adds the config files at the top of git directory dir; the walk
// finds the deeper ones.
func (g *gitFence) configsOf(dir string) {
	for _, n := range []string{"config", "config.worktree"} {
		c := filepath.Join(dir, n)
		if fi, err := os.Lstat(c); err == nil && !fi.IsDir() {
			g.configs = append(g.configs, c)
		}
	}
}

// pinArgs are the bubblewrap options that bind, for a command under
// ScopeWrite, each folder from root down to each repository over itself,
// shallowest first: a folder that is a mount point cannot be moved or
// removed.
func (g *gitFence) pinArgs() []string {
	pins := map[string]bool{}
	reserved := filepath.Join(g.root, reservedDir)
	for _, r := range g.repos {
		if r == reserved || strings.HasPrefix(r, reserved+"/") {
			continue // read-only already; a bind would make it writable
		}
		for p := r; strings.HasPrefix(p, g.root+"/"); p = filepath.Dir(p) {
			pins[p] = true
		}
	}
	sorted := make([]string, 0, len(pins))
	for p := range pins {
		sorted = append(sorted, p)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if ci, cj := strings.Count(sorted[i], "/"), strings.Count(sorted[j], "/"); ci != cj {
			return ci < cj
		}
		return sorted[i] < sorted[j]
	})
	var a []string
	for _, p := range sorted {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			a = append(a, "--bind", p, p)
		}
	}
	return a
}

// maxGitConfigs bounds the config files a command's start sanitises (one
// git run each).
const maxGitConfigs = 512

// configArgs write a sanitised copy of each config file in dir, and are
// the bubblewrap options that bind each read-only over its file. A
// workspace holding more than maxGitConfigs is refused: a command a rule
// approved does not run there.
func (g *gitFence) configArgs(dir string) ([]string, error) {
	var a, configs []string
	seen := map[string]bool{}
	for _, c := range g.configs {
		if !seen[c] {
			seen[c] = true
			configs = append(configs, c)
		}
	}
	if len(configs) > maxGitConfigs {
		return nil, fmt.Errorf("the workspace holds %d git config files, more than the %d a command a rule approved can be given sanitised (T12): approve the command itself", len(configs), maxGitConfigs)
	}
	for i, c := range configs {
		copyPath := filepath.Join(dir, fmt.Sprintf("config-%d", i))
		if err := os.WriteFile(copyPath, sanitiseGitConfig(c), 0o444); err != nil {
			return nil, fmt.Errorf("sandbox: git config %s: %w", c, err)
		}
		a = append(a, "--ro-bind", copyPath, c)
	}
	return a, nil
}

// env names the repositories git may use, as settings on its command line
// (GIT_CONFIG_PARAMETERS), and makes git ask for that of every repository.
func (g *gitFence) env() []string {
	var params []string
	seen := map[string]bool{}
	for _, r := range g.repos {
		names := []string{r}
		if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
			names = append(names, real)
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				params = append(params, sq("safe.directory")+"="+sq(n))
			}
		}
	}
	if len(params) == 0 {
		// An empty value empties the list: no repository is safe.
		params = append(params, sq("safe.directory")+"="+sq(""))
	}
	return []string{"GIT_TEST_ASSUME_DIFFERENT_OWNER=1", "GIT_CONFIG_PARAMETERS=" + strings.Join(params, " ")}
}

// sq quotes s for GIT_CONFIG_PARAMETERS as git's sq_quote does.
func sq(s string) string {
	s = strings.ReplaceAll(s, "'", `'\''`)
	s = strings.ReplaceAll(s, "!", `'\!'`)
	return "'" + s + "'"
}

// sanitiseGitConfig is the config file at path reduced to the settings that
// run no program (sanitisedKeep), without its includes, as git reads it
// (`git config --file --no-includes --list`); a file git cannot read
// becomes an empty one.
func sanitiseGitConfig(path string) []byte {
	cmd := exec.Command("git", "config", "--file", path, "--no-includes", "--list", "-z")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent"}
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	type entry struct{ name, value string }
	var order []string
	sections := map[string][]entry{}
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		key, value, hasValue := strings.Cut(rec, "\n")
		if !sanitisedKeep(key) {
			continue
		}
		first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
		sec, sub, name := key[:first], "", key[last+1:]
		if last > first {
			sub = key[first+1 : last]
		}
		header := "[" + sec + "]"
		if last > first {
			header = "[" + sec + ` "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(sub) + `"]`
		}
		if _, ok := sections[header]; !ok {
			order = append(order, header)
		}
		line := name
		if hasValue {
			line += " = " + `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(value) + `"`
		}
		sections[header] = append(sections[header], entry{name, line})
	}
	var b bytes.Buffer
	for _, h := range order {
		b.WriteString(h + "\n")
		for _, e := range sections[h] {
			b.WriteString("\t" + e.value + "\n")
		}
	}
	return b.Bytes()
}

// sanitisedKeep reports whether a setting (as git lists it: section and
// name in lower case, a subsection as written) is kept in a sanitised
// config: it says how the repository is laid out, where its remotes and
// branches are, who commits and how things look, and runs no program,
// whatever its value. Everything else goes, includes among them.
func sanitisedKeep(key string) bool {
	first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
	if first < 0 {
		return false
	}
	sec, name := key[:first], key[last+1:]
	if last > first {
		// A subsection: NAME is the repository's choice.
		switch sec {
		case "remote":
			return oneOf(name, "url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror", "promisor", "partialclonefilter")
		case "branch":
			return oneOf(name, "remote", "merge", "rebase", "pushremote", "description")
		case "submodule":
			return oneOf(name, "url", "path", "active", "branch")
		case "diff":
			return oneOf(name, "xfuncname", "funcname", "binary", "wordregex")
		case "color":
			return true
		}
		return false
	}
	switch sec {
	case "extensions", "color", "user", "author", "committer", "i18n":
		return true
	case "core":
		return oneOf(name, "repositoryformatversion", "bare", "filemode", "logallrefupdates", "ignorecase", "precomposeunicode",
			"symlinks", "worktree", "autocrlf", "eol", "safecrlf", "quotepath", "abbrev", "sparsecheckout", "sparsecheckoutcone",
			"splitindex", "untrackedcache", "checkstat", "trustctime", "commentchar", "compression", "bigfilethreshold",
			"sharedrepository", "warnambiguousrefs", "protecthfs", "protectntfs")
	case "init":
		return name == "defaultbranch"
	case "index":
		return name == "version"
	case "diff":
		return oneOf(name, "renames", "algorithm", "noprefix", "mnemonicprefix", "context", "indentheuristic", "relative")
	case "merge":
		return oneOf(name, "ff", "conflictstyle")
	case "pull":
		return oneOf(name, "rebase", "ff")
	case "push":
		return name == "default"
	case "fetch":
		return name == "prune"
	case "status":
		return oneOf(name, "showuntrackedfiles", "short", "branch")
	case "log":
		return oneOf(name, "date", "decorate", "follow")
	}
	return false
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// gitFenceNote checks that the git here refuses a repository that
// safe.directory does not name once told to take it for another user's
// (git 2.35.2 and later), with the environment a command gets (env), and
// says what is lost when it does not; "" when it does or when there is no
// git.
func gitFenceNote() string {
	git, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	dir, err := os.MkdirTemp("", "toolround-gitcheck-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent"}
	initCmd := exec.Command(git, "init", "-q", dir)
	initCmd.Env = env
	if initCmd.Run() != nil {
		return ""
	}
	cmd := exec.Command(git, "rev-parse", "--git-dir")
	cmd.Dir = dir
	cmd.Env = append(env, (&gitFence{root: dir}).env()...)
	if cmd.Run() != nil {
		return ""
	}
	return "git here uses a repository that safe.directory does not name (git before 2.35.2): a repository that a command a rule approved unpacks while it runs has its own configuration read, programs it names included (T12)"
}
