package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestCalculate(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		expr string
		want string
	}{
		{"1 + 2", "3"},
		{"(3 + 4) * 2 ** 10 / sqrt(49)", "1024"},
		{"0.1 + 0.2", "0.3"},
		{"7 / 2", "3.5"},
		{"8 / 2", "4"},
		{"7 % 3", "1"},
		{"5.5 % 2", "1.5"},
		{"2 ^ 10", "1024"},
		{"2 ** 0.5", "1.4142135623731"},
		{"pow(2, 8)", "256"},
		{"abs(-3)", "3"},
		{"abs(-2.5)", "2.5"},
		{"floor(2.7)", "2"},
		{"ceil(2.1)", "3"},
		{"round(2.5)", "3"},
		{"round(pi, 3)", "3.142"},
		{"round(1234.5, -2)", "1200"},
		{"trunc(-2.7)", "-2"},
		{"min(4, 2, 8)", "2"},
		{"max(1..5)", "5"},
		{"sum(1..100)", "5050"},
		{"sum([1.5, 2.5])", "4"},
		{"mean(1, 2)", "1.5"},
		{"median([3, 1, 2, 10])", "2.5"},
		{"log(e)", "1"},
		{"log(8, 2)", "3"},
		{"log10(1000)", "3"},
		{"log2(1024)", "10"},
		{"exp(0)", "1"},
		{"sin(pi / 2)", "1"},
		{"cos(0)", "1"},
		{"round(degrees(atan2(1, 1)), 6)", "45"},
		{"hypot(3, 4)", "5"},
		{"factorial(10)", "3628800"},
		{"gcd(12, 18)", "6"},
		{"lcm(4, 6)", "12"},
		{"int(3.9)", "3"},
		{"sign(-4)", "-1"},
		{"cbrt(27)", "3"},
		{"tau / pi", "2"},
		{"1 < 2 and 3 > 2", "true"},
		{"10 > 3 ? 'big' : 'small'", "big"},
		{"let x = 3; x * x + 1", "10"},
		{"sum(map(1..10, # ** 2))", "385"},
		{"filter(1..10, # % 3 == 0)", "[3, 6, 9]"},
		{"reduce(1..5, #acc * #, 1)", "120"},
		{"map(1..3, sum(1..#))", "[1, 3, 6]"},
		{"1 in 1..1000000000", "true"},
		{"9223372036854775807 + 1", "9223372036854775808"},
		{"1000000 * 1000000 * 1000000", "1000000000000000000"},
		{"-0.0", "0"},
		{"1e21", "1e+21"},
		{"1 / 3", "0.333333333333333"},
		{"  2 + 2  ", "4"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := e.mustCall(t, "calculate", tools.Request{}, jsonArgs(t, map[string]any{"expression": tt.expr}))
			require.Equal(t, tt.want, got)
		})
	}
}

func TestCalculateFailures(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.MaxExpressionChars = 200; c.CalcMemoryBudget = 10_000 })
	tests := []struct {
		expr string
		want string
	}{
		{"1 / 0", "division by zero"},
		{"1.5 / (2 - 2)", "division by zero"},
		{"5 % 0", "modulo by zero"},
		{"0 ** -1", "division by zero"},
		{"1 +", "cannot parse the expression"},
		{"(1 + 2", "cannot parse the expression"},
		{"2 * * 3", "cannot parse the expression"},
		{"foo + 1", "unknown name foo"},
		{"now()", "unknown name now"},
		{"env", "unknown name env"},
		{"sqrt(-1)", "sqrt of a negative number"},
		{"log(0)", "not positive"},
		{"log(8, 1)", "log base"},
		{"asin(2)", "from -1 to 1"},
		{"10 ** 400", "overflows"},
		{"1e308 * 10", "overflows"},
		{"(-8) ** (1/3)", "not a real number"},
		{"factorial(171)", "from 0 to 170"},
		{"factorial(2.5)", "whole number"},
		{"min()", "at least one number"},
		{"sqrt('x')", `got the string "x"`},
		{"'a' + 1", "needs a number"},
		{"[1] + [2]", "got a list"},
		{"1..1000000000", "more than 10000 elements"},
		{"1..20000", "more than 10000 elements"},
		{"map(1..10, map(1..10, #))", "loops may not nest"},
		{"all(1..10, any(1..10, true))", "loops may not nest"},
		{"'abc' matches 'b'", "matches operator is not available"},
		{strings.Repeat("1+", 101) + "1", "more than the limit of 200"},
		{"   ", "expression is empty"},
		{"round(1, 99)", "from -15 to 15"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			def, _ := e.reg.Lookup("calculate")
			res, err := def.Handler(context.Background(), tools.Request{Args: []byte(jsonArgs(t, map[string]any{"expression": tt.expr}))})
			require.Error(t, err, "result was %q", res.Content)
			require.False(t, strings.HasPrefix(err.Error(), "calculate"), "the failure text adds the name: %s", err)
			require.Contains(t, err.Error(), tt.want)
			require.False(t, tools.IsTransient(err), "a bad expression is not worth retrying")
		})
	}
}

// TestCalculateRunawayIsBounded guards the evaluation limits: each
// expression here would run for minutes or use gigabytes without them.
func TestCalculateRunawayIsBounded(t *testing.T) {
	e := newEnv(t, nil)
	for _, expr := range []string{
		"let a = 1..1000; all(a, all(a, all(a, true)))",
		"let a = 1..300; map(a, map(a, map(a, 1)))",
		"1..9223372036854775807",
		"reduce(1..99999, #acc + 'aaaaaaaaaaaaaaaaaaaa', '')",
		"max(map(1..99999, #)) + max(map(1..99999, #))",
	} {
		start := time.Now()
		_, err := e.call(t, "calculate", tools.Request{}, jsonArgs(t, map[string]any{"expression": expr}))
		require.Error(t, err, expr)
		require.Less(t, time.Since(start), 2*time.Second, expr)
	}
}

func TestCalculateCancelled(t *testing.T) {
	e := newEnv(t, nil)
	def, _ := e.reg.Lookup("calculate")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := def.Handler(ctx, tools.Request{Args: []byte(`{"expression":"1+1"}`)})
	require.ErrorIs(t, err, context.Canceled)
}

// The tools of C1 run concurrently in one worker: one calculator and one
// renderer serve every call.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, nil)
	calc, _ := e.reg.Lookup("calculate")
	tmpl, _ := e.reg.Lookup("html_template")
	errs := make(chan error, 32)
	for i := range 16 {
		go func() {
			res, err := calc.Handler(context.Background(), tools.Request{Args: []byte(fmt.Sprintf(`{"expression":"sum(map(1..%d, # * 2))"}`, i+1))})
			if err == nil && res.Content != fmt.Sprint((i+1)*(i+2)) {
				err = fmt.Errorf("calculate %d: got %s", i, res.Content)
			}
			errs <- err
		}()
		go func() {
			res, err := tmpl.Handler(context.Background(), tools.Request{Args: []byte(fmt.Sprintf(`{"name":"list","data":{"title":"t%d","items":["a"]}}`, i))})
			if err == nil && !strings.Contains(res.Content, fmt.Sprintf("<title>t%d</title>", i)) {
				err = fmt.Errorf("html_template %d: wrong page", i)
			}
			errs <- err
		}()
	}
	for range 32 {
		require.NoError(t, <-errs)
	}
}
