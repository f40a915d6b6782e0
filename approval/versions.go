package approval

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// VersionProbe is how a worker asks one tabled program for its version at
// start (T11): it runs Program (found on its PATH) with Args, reads the
// version from what it prints (InTestedRange) and, when it lies outside
// Tested, records the program among the round's untested ones
// (Policy.Untested). A program that is not there never runs, so it is not
// probed further.
type VersionProbe struct {
	Program string
	Args    []string
	Tested  string
}

// VersionProbes are the probes of every tabled program with a tested
// range, by program name.
func VersionProbes() []VersionProbe {
	names := make([]string, 0, len(programTables))
	for n, p := range programTables {
		if p.Tested != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]VersionProbe, len(names))
	for i, n := range names {
		p := programTables[n]
		args := []string{"--version"}
		if p.Probe != "" {
			args = strings.Fields(p.Probe)
		}
		out[i] = VersionProbe{Program: n, Args: args, Tested: p.Tested}
	}
	return out
}

var versionRE = regexp.MustCompile(`\d+(?:\.\d+)+`)

// InTestedRange reads the first dotted version number from a probe's
// output (`git version 2.39.5`, `v20.11.1`, `go1.22.1`) and reports
// whether it lies in tested, "FROM-TO": at least FROM, and at most TO in
// the components TO gives (2.49 covers 2.49.5). An output without a
// version is outside any range.
func InTestedRange(output, tested string) (version string, ok bool) {
	version = versionRE.FindString(output)
	from, to, found := strings.Cut(tested, "-")
	if version == "" || !found {
		return version, false
	}
	v := versionParts(version)
	lo, hi := versionParts(from), versionParts(to)
	if lo == nil || hi == nil {
		return version, false
	}
	return version, compareParts(v, lo, len(v)+len(lo)) >= 0 && compareParts(v, hi, len(hi)) <= 0
}

func versionParts(s string) []int {
	var out []int
	for _, f := range strings.Split(strings.TrimSpace(s), ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// compareParts compares the first n components of a and b, a missing
// component being 0.
func compareParts(a, b []int, n int) int {
	for i := 0; i < n; i++ {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// WorkspaceCodeProgram returns the program a command pattern names when
// its table classes it runs-workspace-code (python3, node, go, npm, make,
// a shell with a script file): a rule over it is consent to run the
// workspace's code, whatever that code is when a matching command runs,
// and its scope is always write (RememberScoped). ok is false for any
// other pattern.
func WorkspaceCodeProgram(pattern string) (program string, ok bool) {
	progs, class, ok := RulePrograms(pattern)
	if !ok || class != ClassRunsWorkspaceCode {
		return "", false
	}
	return progs[0], true
}

// WorkspaceCodePrograms are the programs WorkspaceCodeProgram names, sorted.
func WorkspaceCodePrograms() []string {
	var out []string
	for n, p := range programTables {
		if p.Class == ClassRunsWorkspaceCode {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// WorkspaceCodeNotice is what a person is told before a rule over program,
// one WorkspaceCodeProgram names, is remembered (T11).
func WorkspaceCodeNotice(program string) string {
	return program + " runs the workspace's code: a rule over it is consent to run whatever code the workspace holds " +
		"when a matching command runs, and its scope is always write"
}
