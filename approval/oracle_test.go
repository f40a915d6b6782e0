package approval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOracleCorpus (T13): the oracle's corpus holds at least 1,000
// commands, the same ones on every call: every probe, and every name of
// every option of every table; every example rule is a valid pattern that
// matches the call it is remembered from. tools/command's
// TestMatcherOracle runs it.
func TestOracleCorpus(t *testing.T) {
	corpus := OracleCorpus()
	require.GreaterOrEqual(t, len(corpus), 1000)
	require.Equal(t, corpus, OracleCorpus())
	words := map[string]bool{}
	have := map[string]bool{}
	for _, c := range corpus {
		have[c] = true
		for _, w := range strings.Fields(c) {
			name, _, _ := strings.Cut(w, "=")
			words[name] = true
		}
	}
	for _, p := range tableProbes {
		for _, s := range p.scripts {
			require.True(t, have[s], "probe %q", s)
		}
	}
	var check func(string, *Program)
	check = func(prog string, p *Program) {
		p.init()
		for n := range p.byName {
			require.True(t, words[n], "%s: option %s is in no command", prog, n)
		}
		for s, sub := range p.Subs {
			check(prog+" "+s, sub)
		}
	}
	for n, p := range programTables {
		check(n, p)
	}
	for _, e := range ExampleRules {
		rules, err := RememberScoped(TablesCurrent, KindCommand, "run_command", cmdArgs(e.Approved), e.Pattern, "", false)
		require.NoError(t, err, e.Pattern)
		require.True(t, MatchAt(TablesCurrent, rules, KindCommand, "run_command", cmdArgs(e.Approved)), "%q does not match %q", e.Pattern, e.Approved)
	}
}
