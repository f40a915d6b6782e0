package approval

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
)

// subjectPrefix starts the kind of a user tool that declares a subject
// (Y3): its rules are globs over that one string argument.
const subjectPrefix = "subject:"

// SubjectKind is the kind of the rules of a tool whose subject is the
// string argument arg: a pattern is a glob over that argument, where `*`
// stands for any characters (none included), `?` for one, and every other
// character for itself (globMatch), such as `A-*` or `*@example.com`; "*" alone matches every call.
func SubjectKind(arg string) Kind { return Kind(subjectPrefix + arg) }

// subjectArg is the argument a subject kind's patterns read.
func subjectArg(kind Kind) (string, bool) {
	arg, ok := strings.CutPrefix(string(kind), subjectPrefix)
	return arg, ok && arg != ""
}

func validateSubjectGlob(tool, arg, pattern string) error {
	if pattern == "" {
		return errors.New("an empty pattern: write a glob over " + tool + "'s " + arg + ", such as `A-*`")
	}
	if strings.IndexFunc(pattern, unicode.IsControl) >= 0 {
		return errors.New("a pattern over " + tool + "'s " + arg + " holds a control character")
	}
	return nil
}

// subjectOf is the call's string argument arg; false when it has none or
// it is not a string.
func subjectOf(args map[string]json.RawMessage, arg string) (string, bool) {
	raw, ok := args[arg]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
