package approval

import (
	"slices"
	"strings"
)

// Wrappers: programs that run the command after their own options, matched
// on that command (T4). One table says what options each takes; one
// skipper reads them, and any option the table does not name makes the
// wrapper opaque.

// wrapper is the syntax of one wrapper before the command it runs.
type wrapper struct {
	// flags are options alone.
	flags []string
	// valued are options with a value: the next word, or attached
	// (-sKILL, --signal=KILL).
	valued []string
	// value, when set, must accept every value of a valued option.
	value func(string) bool
	// negNumber: -N is an option too (nice -5).
	negNumber bool
	// assigns: NAME=VALUE words may follow the options (env); each name
	// must pass envNameOK.
	assigns bool
	// operands come between the options and the command (timeout's
	// DURATION).
	operands int
	// plainCommand: a command word that starts with '-' is refused.
	plainCommand bool
	// alone: without a command it runs nothing and needs no rule (time);
	// otherwise it asks, as a pattern never names a wrapper.
	alone bool
}

// wrappers are unwrapped by simple; a pattern never names one.
var wrappers = map[string]wrapper{
	// env [-u NAME] [--] [NAME=VALUE]... [cmd args...]. -i (and - and
	// --ignore-environment) would drop the environment that locks git down
	// for commands that rules approve; -S, -C, -P, --split-string, --chdir
	// and the others are refused as any unknown option.
	"env": {valued: []string{"-u", "--unset"}, value: envNameOK, assigns: true},
	// timeout [options] DURATION cmd args...
	"timeout": {flags: []string{"--preserve-status", "--foreground", "-v", "--verbose"},
		valued: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	// nice [-n N | -N | --adjustment=N] [cmd args...]
	"nice": {valued: []string{"-n", "--adjustment"}, negNumber: true},
	// nohup [--] cmd args...
	"nohup": {plainCommand: true},
	// time [-p] [--] cmd args...; -o FILE, -f FORMAT and the others are
	// refused.
	"time": {flags: []string{"-p"}, plainCommand: true, alone: true},
}

func isWrapper(name string) bool {
	_, ok := wrappers[name]
	return ok
}

// skip returns the index in args of the first word after the wrapper's
// options (past the end when a value is missing); ok is false when an
// option is not one the wrapper is known to take or its value is refused.
func (w wrapper) skip(args []word) (int, bool) {
	i := 0
	for i < len(args) {
		a := args[i].val
		switch {
		case slices.Contains(w.flags, a):
			i++
		case slices.Contains(w.valued, a):
			if w.value != nil && (i+1 >= len(args) || !w.value(args[i+1].val)) {
				return 0, false
			}
			i += 2
		case w.negNumber && isNegNumber(a):
			i++
		case a == "--":
			return i + 1, true
		case strings.HasPrefix(a, "-"):
			v, ok := w.attached(a)
			if !ok || (w.value != nil && !w.value(v)) {
				return 0, false
			}
			i++
		default:
			return i, true
		}
	}
	return i, true
}

// attached finds the value of a valued option written as one word:
// --signal=KILL, -sKILL.
func (w wrapper) attached(a string) (string, bool) {
	for _, o := range w.valued {
		if strings.HasPrefix(o, "--") {
			if v, ok := strings.CutPrefix(a, o+"="); ok {
				return v, true
			}
		} else if !strings.HasPrefix(a, "--") {
			if v, ok := strings.CutPrefix(a, o); ok {
				return v, true
			}
		}
	}
	return "", false
}

// unwrap checks the command a wrapper runs, after its options.
func (c *shellCheck) unwrap(w wrapper, ws []word, depth int) bool {
	args := ws[1:]
	if !literal(args) {
		return false
	}
	i, ok := w.skip(args)
	if !ok {
		return false
	}
	if w.assigns {
		for i < len(args) && strings.Contains(args[i].val, "=") {
			name, _, _ := strings.Cut(args[i].val, "=")
			if !envNameOK(name) {
				return false
			}
			i++
		}
	}
	i += w.operands
	if i >= len(args) {
		return w.alone
	}
	if w.plainCommand && strings.HasPrefix(args[i].val, "-") {
		return false
	}
	return c.simple(args[i:], depth+1)
}

// shells run a script given with -c (matched on that script) or a file.
var shells = setOf("sh", "bash", "dash")

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
