package calc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The evaluator alone; the calculate tool's tests (package agent) go
// through the registry.
func TestEval(t *testing.T) {
	c, err := New(200, 10_000)
	require.NoError(t, err)
	for expr, want := range map[string]string{
		"1 + 2": "3", "0.1 + 0.2": "0.3", "7 / 2": "3.5", "log(8, 2)": "3", "atan2(0, 1)": "0",
		"9223372036854775807 + 1": "9223372036854775808", "'a' + 'b'": "ab", "sum(map(1..4, # * 2))": "20",
	} {
		got, err := c.Eval(expr)
		require.NoError(t, err, expr)
		require.Equal(t, want, got, expr)
	}
	for expr, want := range map[string]string{
		"1 / 0": "division by zero", "sqrt()": "sqrt takes 1 argument, got 0",
		"hypot(1)": "hypot takes 2 arguments, got 1", "nosuch(1)": "unknown name nosuch",
	} {
		_, err := c.Eval(expr)
		require.ErrorContains(t, err, want, expr)
	}
}
