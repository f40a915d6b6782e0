// Package calc evaluates the arithmetic expressions of the calculate tool
// (package agent): expr (github.com/expr-lang/expr) over constants and a
// table of math functions, with checked operators and bounded work.
package calc

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// maxOutput caps the text of a result (a long range printed whole).
const maxOutput = 16 << 10

// Calculator evaluates arithmetic with expr in an environment that holds
// only constants and math functions: no Go values and no builtins that touch
// time, JSON or strings at scale. Work is bounded: ranges and arrays count
// against a memory budget, strings stay short, and loops (map, filter, all,
// reduce, ...) may not nest, so one evaluation is at most a few passes over
// budget-sized lists.
type Calculator struct {
	maxChars int
	budget   uint
	env      map[string]any
	funcs    []expr.Option
}

// New returns a calculator for expressions of at most maxChars characters
// whose ranges and arrays hold at most budget elements in all. It evaluates
// one expression first, so that a broken environment fails at start.
func New(maxChars int, budget uint) (*Calculator, error) {
	c := &Calculator{
		maxChars: maxChars,
		budget:   budget,
		env: map[string]any{
			"pi":  math.Pi,
			"e":   math.E,
			"tau": 2 * math.Pi,
			"phi": math.Phi,
		},
	}
	for name, fn := range library(maxChars) {
		c.funcs = append(c.funcs, expr.Function(name, fn))
	}
	if _, err := c.Eval("sqrt(pi) + 1"); err != nil {
		return nil, err
	}
	return c, nil
}

// compile parses src with the checked operators patched in and refuses the
// constructs that would make evaluation unbounded.
func (c *Calculator) compile(src string) (*vm.Program, error) {
	check := &patcher{}
	opts := append([]expr.Option{
		expr.Env(c.env),
		expr.DisableAllBuiltins(),
		expr.MaxNodes(uint(c.maxChars)),
		expr.Patch(check),
	}, c.funcs...)
	program, err := expr.Compile(src, opts...)
	if check.err != nil {
		return nil, refusedError{check.err}
	}
	return program, err
}

// refusedError is an expression that parses but is not allowed.
type refusedError struct{ err error }

func (e refusedError) Error() string { return e.err.Error() }
func (e refusedError) Unwrap() error { return e.err }

// Eval returns the formatted value of expression, or an error whose text
// says what to change. It is safe for concurrent use.
func (c *Calculator) Eval(expression string) (string, error) {
	src := strings.TrimSpace(expression)
	if src == "" {
		return "", errors.New("the expression is empty")
	}
	if len(src) > c.maxChars {
		return "", fmt.Errorf("the expression is %d characters, more than the limit of %d; split the work into smaller steps", len(src), c.maxChars)
	}
	program, err := c.compile(src)
	var refused refusedError
	if errors.As(err, &refused) {
		return "", refused.err
	}
	if err != nil {
		return "", fmt.Errorf("cannot parse the expression: %s", message(err))
	}
	machine := vm.VM{MemoryBudget: c.budget}
	v, err := machine.Run(program, c.env)
	if err != nil {
		msg := message(err)
		if strings.Contains(msg, "memory budget exceeded") {
			return "", fmt.Errorf("the expression needs more than %d elements (ranges and arrays); use smaller ranges or a formula", c.budget)
		}
		return "", errors.New(msg)
	}
	out, err := formatValue(v, 0)
	if err != nil {
		return "", err
	}
	if len(out) > maxOutput {
		return "", fmt.Errorf("the result is %d characters long, more than the limit of %d; return an aggregate (sum, max, len) instead", len(out), maxOutput)
	}
	return out, nil
}

// message is expr's error text with its source excerpt (which points at
// the column) kept, and Go type names made plainer.
func message(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "interface {}", "value")
	return msg
}
