package approval

import "fmt"

// Remember returns the rules a confirmation with remember set adds to the
// run state (P1.6, T1, T4), unsigned: sign each with Sign before storing.
//
// Without a pattern the rule is exact: it approves these canonical
// arguments only (the ones the person approved, edited or not). With a
// pattern, the pattern must be valid for the tool's kind (ValidatePattern);
// when the call sends secrets ({{secret:NAME}} in a KindRequest call), each secret
// gets a rule that allows it for the same pattern, since the person saw
// and approved that.
//
// Remember validates with the current version of the matcher
// (TablesCurrent); RememberAt names one.
func Remember(kind Kind, tool, canonicalArgs, pattern string) ([]Rule, error) {
	return RememberAt(TablesCurrent, kind, tool, canonicalArgs, pattern)
}

// RememberAt is Remember with the patterns of one version of the matcher
// (ValidatePatternAt): a round decides with the version it recorded.
func RememberAt(tables int, kind Kind, tool, canonicalArgs, pattern string) ([]Rule, error) {
	if tool == "" {
		return nil, fmt.Errorf("approval: a rule needs a tool")
	}
	if pattern == "" {
		if canonicalArgs == "" {
			return nil, fmt.Errorf("approval: an exact rule for %s needs the call's arguments", tool)
		}
		return []Rule{{Tool: tool, Args: canonicalArgs}}, nil
	}
	if err := ValidatePatternAt(tables, kind, tool, pattern); err != nil {
		return nil, fmt.Errorf("approval: pattern %q for %s: %w", pattern, tool, err)
	}
	rules := []Rule{{Tool: tool, Pattern: pattern}}
	if kind == KindRequest {
		for _, s := range SecretNames(canonicalArgs) {
			rules = append(rules, Rule{Tool: tool, Pattern: pattern, Secret: s})
		}
	}
	return rules, nil
}

// RememberScoped is RememberAt for a decision that may name the rules'
// scope (T12): scope is ScopeReadOnly, ScopeWrite or empty. Empty is
// ScopeReadOnly when the approved call is a read-only form (a command
// ReadOnlyCommand accepts; for other kinds, readOnly, the call's effect),
// else ScopeWrite. A pattern over a program that runs the workspace's code
// is ScopeWrite whatever was asked: such a rule is consent to run that code.
func RememberScoped(tables int, kind Kind, tool, canonicalArgs, pattern, scope string, readOnly bool) ([]Rule, error) {
	if !ValidScope(scope) {
		return nil, fmt.Errorf("approval: scope %q: it is %q or %q", scope, ScopeReadOnly, ScopeWrite)
	}
	rules, err := RememberAt(tables, kind, tool, canonicalArgs, pattern)
	if err != nil {
		return nil, err
	}
	if scope == "" {
		scope = DefaultScope(kind, canonicalArgs, readOnly)
	}
	if kind == KindCommand && pattern != "" {
		if _, ok := WorkspaceCodeProgram(pattern); ok {
			scope = ScopeWrite
		}
	}
	for i := range rules {
		rules[i].Scope = scope
	}
	return rules, nil
}

// DefaultScope is the scope of a rule remembered without one (T12):
// ScopeReadOnly when the approved call is a read-only form, else
// ScopeWrite. For a command that is a script ReadOnlyCommand accepts; for
// the other kinds, readOnly (the call's effect).
func DefaultScope(kind Kind, canonicalArgs string, readOnly bool) string {
	if kind == KindCommand {
		args, ok := decodeArgs(canonicalArgs)
		if !ok {
			return ScopeWrite
		}
		script, ok := stringField(args, "command")
		if ok && ReadOnlyCommand(script) {
			return ScopeReadOnly
		}
		return ScopeWrite
	}
	if readOnly {
		return ScopeReadOnly
	}
	return ScopeWrite
}
