package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent/calc"
)

// calculator is the calculate tool over the evaluator of package calc: the
// environment holds only constants and math functions, and work is bounded
// (ranges and arrays count against a memory budget, strings stay short,
// loops may not nest).
type calculator struct {
	maxChars int
	calc     *calc.Calculator
}

func newCalculator(maxChars int, budget uint) (*calculator, error) {
	c, err := calc.New(maxChars, budget)
	if err != nil {
		return nil, fmt.Errorf("agent: calculate environment: %w", err)
	}
	return &calculator{maxChars: maxChars, calc: c}, nil
}

func (c *calculator) definition() tools.Definition {
	return tools.Definition{
		Name: "calculate",
		Description: "Evaluate a math expression exactly instead of doing arithmetic in your head. " +
			"Operators: + - * / % ** (power), comparisons, and/or/not, ?: and ranges like 1..10. " +
			"Functions: sqrt, cbrt, pow, exp, log (natural; log(x, base)), ln, log10, log2, abs, floor, ceil, " +
			"round (round(x, digits)), trunc, sign, min, max, sum, mean, median, sin, cos, tan, asin, acos, atan, atan2, " +
			"sinh, cosh, tanh, hypot, radians, degrees, factorial, gcd, lcm, int, float. Constants: pi, e, tau, phi. " +
			"Lists: [1, 2, 3], ranges 1..10, and one level of map/filter/reduce/all/any/count with # for the element " +
			"(sum(map(1..10, # ** 2))). Trigonometry works in radians. Example: round(sqrt(2) * 100, 2).",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"expression": {Description: `the expression, e.g. "(3 + 4) * 2 ** 10 / sqrt(49)"`, MaxLength: tools.Ptr(c.maxChars), MinLength: tools.Ptr(1), Type: "string"},
		}, "expression")),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Timeout:    5 * time.Second,
		Source:     tools.SourceBuiltin,
		Subject:    tools.SubjectField("expression"),
		Handler:    tools.Typed(c.handle),
	}
}

type calculatorArgs = struct {
	Expression string `json:"expression"`
}

func (c *calculator) handle(ctx context.Context, req tools.Request, args calculatorArgs) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	out, err := c.eval(args.Expression)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Text(out), nil
}

// eval returns the formatted value of expression.
func (c *calculator) eval(expression string) (string, error) {
	return c.calc.Eval(expression)
}
