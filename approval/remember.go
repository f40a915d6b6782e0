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
		for _, s := range secretNames(canonicalArgs) {
			rules = append(rules, Rule{Tool: tool, Pattern: pattern, Secret: s})
		}
	}
	return rules, nil
}
