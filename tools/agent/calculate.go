package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"

	"github.com/toolround/toolround/tools"
)

// calcMaxOutput caps the text of a result (a long range printed whole).
const calcMaxOutput = 16 << 10

// calculator evaluates arithmetic with expr in an environment that holds
// only constants and math functions: no Go values and no builtins that touch
// time, JSON or strings at scale. Work is bounded: ranges and arrays count
// against a memory budget, strings stay short, and loops (map, filter, all,
// reduce, ...) may not nest, so one evaluation is at most a few passes over
// budget-sized lists.
type calculator struct {
	maxChars int
	budget   uint
	env      map[string]any
	funcs    []expr.Option
}

func newCalculator(maxChars int, budget uint) (*calculator, error) {
	c := &calculator{
		maxChars: maxChars,
		budget:   budget,
		env: map[string]any{
			"pi":  math.Pi,
			"e":   math.E,
			"tau": 2 * math.Pi,
			"phi": math.Phi,
		},
	}
	for name, fn := range calcFunctions(maxChars) {
		c.funcs = append(c.funcs, expr.Function(name, fn))
	}
	// Evaluate once at start so that a broken environment fails registration.
	if _, err := c.eval("sqrt(pi) + 1"); err != nil {
		return nil, fmt.Errorf("agent: calculate environment: %w", err)
	}
	return c, nil
}

// compile parses src with the checked operators patched in and refuses the
// constructs that would make evaluation unbounded.
func (c *calculator) compile(src string) (*vm.Program, error) {
	check := &calcPatcher{}
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
		return "", fmt.Errorf("cannot parse the expression: %s", calcMessage(err))
	}
	machine := vm.VM{MemoryBudget: c.budget}
	v, err := machine.Run(program, c.env)
	if err != nil {
		msg := calcMessage(err)
		if strings.Contains(msg, "memory budget exceeded") {
			return "", fmt.Errorf("the expression needs more than %d elements (ranges and arrays); use smaller ranges or a formula", c.budget)
		}
		return "", errors.New(msg)
	}
	out, err := formatValue(v, 0)
	if err != nil {
		return "", err
	}
	if len(out) > calcMaxOutput {
		return "", fmt.Errorf("the result is %d characters long, more than the limit of %d; return an aggregate (sum, max, len) instead", len(out), calcMaxOutput)
	}
	return out, nil
}

// calcMessage is expr's error text with its source excerpt (which points at
// the column) kept, and Go type names made plainer.
func calcMessage(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "interface {}", "value")
	return msg
}

func formatValue(v any, depth int) (string, error) {
	if depth > 8 {
		return "", errors.New("the result nests too deeply to print")
	}
	switch x := v.(type) {
	case nil:
		return "nil", nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return formatFloat(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.Float32:
		return formatFloat(rv.Float())
	case reflect.Slice, reflect.Array:
		parts := make([]string, 0, min(rv.Len(), 1024))
		size := 0
		for i := 0; i < rv.Len(); i++ {
			s, err := formatValue(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return "", err
			}
			size += len(s) + 2
			if size > calcMaxOutput {
				return "", fmt.Errorf("the result is a list of %d values, too long to print; return an aggregate (sum, max, len) instead", rv.Len())
			}
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case reflect.Map:
		keys := make([]string, 0, rv.Len())
		vals := map[string]string{}
		for _, k := range rv.MapKeys() {
			ks := fmt.Sprint(k.Interface())
			s, err := formatValue(rv.MapIndex(k).Interface(), depth+1)
			if err != nil {
				return "", err
			}
			keys = append(keys, ks)
			vals[ks] = s
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + vals[k]
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("the result (%T) cannot be printed", v)
	}
	return string(b), nil
}

func formatFloat(f float64) (string, error) {
	switch {
	case math.IsNaN(f):
		return "", errors.New("the result is not a number (NaN): an operation is undefined for its inputs")
	case math.IsInf(f, 0):
		return "", errors.New("the result is infinite: a value overflowed float64 (about 1.8e308)")
	case f == 0:
		return "0", nil // also -0
	case f == math.Trunc(f) && math.Abs(f) < 1e21:
		return strconv.FormatFloat(f, 'f', 0, 64), nil
	}
	// 15 significant digits hide binary rounding noise (0.1+0.2 prints 0.3).
	return strconv.FormatFloat(f, 'g', 15, 64), nil
}

// calcPatcher rewrites arithmetic into calls of checked functions (division
// and modulo by zero become errors, integer overflow moves to float64
// instead of wrapping around) and records constructs that are refused.
type calcPatcher struct {
	err error
}

var checkedOps = map[string]string{
	"/":  "_div",
	"%":  "_mod",
	"+":  "_add",
	"-":  "_sub",
	"*":  "_mul",
	"**": "_pow",
	"^":  "_pow",
}

func (p *calcPatcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if n.Operator == "matches" {
			p.fail(errors.New("the matches operator is not available in calculate"))
			return
		}
		fn, ok := checkedOps[n.Operator]
		if !ok {
			return
		}
		ast.Patch(node, &ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: fn},
			Arguments: []ast.Node{n.Left, n.Right},
		})
	case *ast.BuiltinNode:
		// ast.Walk visits children first, so inner loops were seen already;
		// here it is enough to look inside this loop's bodies.
		for _, arg := range n.Arguments {
			body, ok := arg.(*ast.PredicateNode)
			if !ok {
				continue
			}
			inner := &loopFinder{}
			ast.Walk(&body.Node, inner)
			if inner.name != "" {
				p.fail(fmt.Errorf("%s inside %s: loops may not nest in calculate; use a range or a formula instead (sum(1..n), n*(n+1)/2)", inner.name, n.Name))
			}
		}
	}
}

func (p *calcPatcher) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// loopFinder finds a builtin that takes a loop body (map, all, reduce, ...).
type loopFinder struct{ name string }

func (f *loopFinder) Visit(node *ast.Node) {
	if n, ok := (*node).(*ast.BuiltinNode); ok && f.name == "" {
		for _, arg := range n.Arguments {
			if _, ok := arg.(*ast.PredicateNode); ok {
				f.name = n.Name
				return
			}
		}
	}
}

type calcFunc = func(params ...any) (any, error)

func calcFunctions(maxString int) map[string]calcFunc {
	unary := func(name string, f func(float64) (float64, error)) calcFunc {
		return func(p ...any) (any, error) {
			if len(p) != 1 {
				return nil, fmt.Errorf("%s takes 1 argument, got %d", name, len(p))
			}
			x, err := toFloat(name, p[0])
			if err != nil {
				return nil, err
			}
			return f(x)
		}
	}
	plain := func(f func(float64) float64) func(float64) (float64, error) {
		return func(x float64) (float64, error) { return f(x), nil }
	}
	binary := func(name string, f func(a, b float64) (float64, error)) calcFunc {
		return func(p ...any) (any, error) {
			if len(p) != 2 {
				return nil, fmt.Errorf("%s takes 2 arguments, got %d", name, len(p))
			}
			a, err := toFloat(name, p[0])
			if err != nil {
				return nil, err
			}
			b, err := toFloat(name, p[1])
			if err != nil {
				return nil, err
			}
			return f(a, b)
		}
	}
	fns := map[string]calcFunc{
		"sqrt": unary("sqrt", func(x float64) (float64, error) {
			if x < 0 {
				return 0, fmt.Errorf("sqrt of a negative number (%s)", fmtNum(x))
			}
			return math.Sqrt(x), nil
		}),
		"cbrt":  unary("cbrt", plain(math.Cbrt)),
		"exp":   unary("exp", plain(math.Exp)),
		"ln":    unary("ln", logOf("ln", math.Log)),
		"log10": unary("log10", logOf("log10", math.Log10)),
		"log2":  unary("log2", logOf("log2", math.Log2)),
		"log": func(p ...any) (any, error) {
			switch len(p) {
			case 1:
				return unary("log", logOf("log", math.Log))(p...)
			case 2:
				return binary("log", func(x, base float64) (float64, error) {
					if x <= 0 {
						return 0, fmt.Errorf("log of a number that is not positive (%s)", fmtNum(x))
					}
					if base <= 0 || base == 1 {
						return 0, fmt.Errorf("log base must be positive and not 1, got %s", fmtNum(base))
					}
					return math.Log(x) / math.Log(base), nil
				})(p...)
			}
			return nil, fmt.Errorf("log takes 1 or 2 arguments (x, base), got %d", len(p))
		},
		"sin":     unary("sin", plain(math.Sin)),
		"cos":     unary("cos", plain(math.Cos)),
		"tan":     unary("tan", plain(math.Tan)),
		"asin":    unary("asin", inUnit("asin", math.Asin)),
		"acos":    unary("acos", inUnit("acos", math.Acos)),
		"atan":    unary("atan", plain(math.Atan)),
		"sinh":    unary("sinh", plain(math.Sinh)),
		"cosh":    unary("cosh", plain(math.Cosh)),
		"tanh":    unary("tanh", plain(math.Tanh)),
		"radians": unary("radians", func(x float64) (float64, error) { return x * math.Pi / 180, nil }),
		"degrees": unary("degrees", func(x float64) (float64, error) { return x * 180 / math.Pi, nil }),
		"atan2":   binary("atan2", func(y, x float64) (float64, error) { return math.Atan2(y, x), nil }),
		"hypot":   binary("hypot", func(a, b float64) (float64, error) { return math.Hypot(a, b), nil }),
		"pow":     func(p ...any) (any, error) { return checkedPow(p...) },
		"_pow":    func(p ...any) (any, error) { return checkedPow(p...) },
		"abs":     intOrFloat("abs", func(i int) (int, bool) { return -i, i != math.MinInt }, math.Abs, func(i int) bool { return i < 0 }),
		"floor":   rounding("floor", math.Floor),
		"ceil":    rounding("ceil", math.Ceil),
		"trunc":   rounding("trunc", math.Trunc),
		"round":   roundFn,
		"sign": unary("sign", func(x float64) (float64, error) {
			switch {
			case x > 0:
				return 1, nil
			case x < 0:
				return -1, nil
			}
			return 0, nil
		}),
		"int": func(p ...any) (any, error) {
			if len(p) != 1 {
				return nil, fmt.Errorf("int takes 1 argument, got %d", len(p))
			}
			if i, ok := p[0].(int); ok {
				return i, nil
			}
			x, err := toFloat("int", p[0])
			if err != nil {
				return nil, err
			}
			if math.IsNaN(x) || math.Abs(x) >= math.MaxInt64 {
				return nil, fmt.Errorf("int: %s does not fit an integer", fmtNum(x))
			}
			return int(x), nil
		},
		"float": unary("float", plain(func(x float64) float64 { return x })),
		"min":   aggregate("min", func(xs []any) (any, error) { return extreme(xs, -1) }),
		"max":   aggregate("max", func(xs []any) (any, error) { return extreme(xs, 1) }),
		"sum":   aggregate("sum", sumOf),
		"mean":  aggregate("mean", meanOf),
		"avg":   aggregate("avg", meanOf),
		"median": aggregate("median", func(xs []any) (any, error) {
			fs, err := floats("median", xs)
			if err != nil {
				return nil, err
			}
			sort.Float64s(fs)
			n := len(fs)
			if n%2 == 1 {
				return fs[n/2], nil
			}
			return (fs[n/2-1] + fs[n/2]) / 2, nil
		}),
		"factorial": func(p ...any) (any, error) {
			if len(p) != 1 {
				return nil, fmt.Errorf("factorial takes 1 argument, got %d", len(p))
			}
			n, err := toWhole("factorial", p[0])
			if err != nil {
				return nil, err
			}
			if n < 0 || n > 170 {
				return nil, fmt.Errorf("factorial needs a whole number from 0 to 170, got %d", n)
			}
			if n <= 20 {
				r := 1
				for i := 2; i <= n; i++ {
					r *= i
				}
				return r, nil
			}
			r := 1.0
			for i := 2; i <= n; i++ {
				r *= float64(i)
			}
			return r, nil
		},
		"gcd": func(p ...any) (any, error) { return gcdLcm("gcd", p) },
		"lcm": func(p ...any) (any, error) { return gcdLcm("lcm", p) },
		"_div": func(p ...any) (any, error) {
			a, b, err := twoNumbers("/", p)
			if err != nil {
				return nil, err
			}
			if b == 0 {
				return nil, errors.New("division by zero")
			}
			if ai, ok := p[0].(int); ok {
				if bi, ok := p[1].(int); ok && ai%bi == 0 && !(ai == math.MinInt && bi == -1) {
					return ai / bi, nil
				}
			}
			return a / b, nil
		},
		"_mod": func(p ...any) (any, error) {
			a, b, err := twoNumbers("%", p)
			if err != nil {
				return nil, err
			}
			if b == 0 {
				return nil, errors.New("modulo by zero")
			}
			if ai, ok := p[0].(int); ok {
				if bi, ok := p[1].(int); ok {
					if bi == -1 {
						return 0, nil
					}
					return ai % bi, nil
				}
			}
			return math.Mod(a, b), nil
		},
		"_add": func(p ...any) (any, error) {
			if len(p) == 2 {
				a, aok := p[0].(string)
				b, bok := p[1].(string)
				if aok && bok {
					if len(a)+len(b) > maxString {
						return nil, fmt.Errorf("strings longer than %d characters are not supported", maxString)
					}
					return a + b, nil
				}
			}
			return intChecked("+", func(a, b int) (int, bool) {
				s := a + b
				return s, (s > a) == (b > 0)
			}, runtime.Add)(p...)
		},
		"_sub": intChecked("-", func(a, b int) (int, bool) {
			s := a - b
			return s, (s < a) == (b > 0)
		}, runtime.Subtract),
		"_mul": intChecked("*", func(a, b int) (int, bool) {
			if a == 0 || b == 0 {
				return 0, true
			}
			s := a * b
			return s, s/b == a && !(a == -1 && b == math.MinInt) && !(b == -1 && a == math.MinInt)
		}, runtime.Multiply),
	}
	return fns
}

func fmtNum(x float64) string {
	if s, err := formatFloat(x); err == nil {
		return s
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func logOf(name string, f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if x <= 0 {
			return 0, fmt.Errorf("%s of a number that is not positive (%s)", name, fmtNum(x))
		}
		return f(x), nil
	}
}

func inUnit(name string, f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if x < -1 || x > 1 {
			return 0, fmt.Errorf("%s needs a value from -1 to 1, got %s", name, fmtNum(x))
		}
		return f(x), nil
	}
}

func checkedPow(p ...any) (any, error) {
	a, b, err := twoNumbers("pow", p)
	if err != nil {
		return nil, err
	}
	if a == 0 && b < 0 {
		return nil, errors.New("division by zero: 0 raised to a negative power")
	}
	r := math.Pow(a, b)
	if math.IsNaN(r) {
		return nil, fmt.Errorf("%s ** %s is not a real number", fmtNum(a), fmtNum(b))
	}
	if math.IsInf(r, 0) {
		return nil, fmt.Errorf("%s ** %s overflows float64 (about 1.8e308)", fmtNum(a), fmtNum(b))
	}
	_, aInt := p[0].(int)
	_, bInt := p[1].(int)
	if aInt && bInt && b >= 0 && math.Abs(r) < 1<<53 {
		return int(r), nil
	}
	return r, nil
}

func intChecked(op string, f func(a, b int) (int, bool), generic func(a, b any) any) calcFunc {
	return func(p ...any) (any, error) {
		if len(p) != 2 {
			return nil, fmt.Errorf("operator %s takes 2 operands", op)
		}
		a, aok := p[0].(int)
		b, bok := p[1].(int)
		if aok && bok {
			if r, ok := f(a, b); ok {
				return r, nil
			}
			x, y := float64(a), float64(b)
			switch op {
			case "+":
				return x + y, nil
			case "-":
				return x - y, nil
			default:
				return x * y, nil
			}
		}
		if _, _, err := twoNumbers("operator "+op, p); err != nil {
			return nil, err
		}
		r := generic(p[0], p[1])
		if f, ok := r.(float64); ok && math.IsInf(f, 0) {
			return nil, fmt.Errorf("operator %s overflows float64 (about 1.8e308)", op)
		}
		return r, nil
	}
}

func intOrFloat(name string, neg func(int) (int, bool), f func(float64) float64, isNeg func(int) bool) calcFunc {
	return func(p ...any) (any, error) {
		if len(p) != 1 {
			return nil, fmt.Errorf("%s takes 1 argument, got %d", name, len(p))
		}
		if i, ok := p[0].(int); ok {
			if !isNeg(i) {
				return i, nil
			}
			if r, ok := neg(i); ok {
				return r, nil
			}
			return -float64(i), nil
		}
		x, err := toFloat(name, p[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}
}

// rounding keeps integers as they are and returns whole floats otherwise.
func rounding(name string, f func(float64) float64) calcFunc {
	return func(p ...any) (any, error) {
		if len(p) != 1 {
			return nil, fmt.Errorf("%s takes 1 argument, got %d", name, len(p))
		}
		if i, ok := p[0].(int); ok {
			return i, nil
		}
		x, err := toFloat(name, p[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}
}

func roundFn(p ...any) (any, error) {
	if len(p) == 0 || len(p) > 2 {
		return nil, fmt.Errorf("round takes 1 or 2 arguments (x, digits), got %d", len(p))
	}
	x, err := toFloat("round", p[0])
	if err != nil {
		return nil, err
	}
	if len(p) == 1 {
		if i, ok := p[0].(int); ok {
			return i, nil
		}
		return math.Round(x), nil
	}
	d, err := toWhole("round", p[1])
	if err != nil {
		return nil, err
	}
	if d < -15 || d > 15 {
		return nil, fmt.Errorf("round digits must be from -15 to 15, got %d", d)
	}
	scale := math.Pow(10, float64(d))
	r := math.Round(x*scale) / scale
	if math.IsInf(x*scale, 0) {
		return x, nil
	}
	return r, nil
}

// aggregate accepts either several numbers or one list of numbers.
func aggregate(name string, f func([]any) (any, error)) calcFunc {
	return func(p ...any) (any, error) {
		xs := p
		if len(p) == 1 {
			rv := reflect.ValueOf(p[0])
			if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
				xs = make([]any, rv.Len())
				for i := range xs {
					xs[i] = rv.Index(i).Interface()
				}
			}
		}
		if len(xs) == 0 {
			return nil, fmt.Errorf("%s needs at least one number", name)
		}
		return f(xs)
	}
}

func floats(name string, xs []any) ([]float64, error) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		f, err := toFloat(name, x)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func extreme(xs []any, sign float64) (any, error) {
	best := xs[0]
	bf, err := toFloat("min/max", best)
	if err != nil {
		return nil, err
	}
	for _, x := range xs[1:] {
		f, err := toFloat("min/max", x)
		if err != nil {
			return nil, err
		}
		if (f-bf)*sign > 0 {
			best, bf = x, f
		}
	}
	return best, nil
}

func sumOf(xs []any) (any, error) {
	total := 0
	allInt := true
	var ftotal float64
	for _, x := range xs {
		f, err := toFloat("sum", x)
		if err != nil {
			return nil, err
		}
		ftotal += f
		if i, ok := x.(int); ok && allInt {
			s := total + i
			if (s > total) != (i > 0) {
				allInt = false
				continue
			}
			total = s
		} else {
			allInt = false
		}
	}
	if allInt {
		return total, nil
	}
	return ftotal, nil
}

func meanOf(xs []any) (any, error) {
	fs, err := floats("mean", xs)
	if err != nil {
		return nil, err
	}
	var total float64
	for _, f := range fs {
		total += f
	}
	return total / float64(len(fs)), nil
}

func gcdLcm(name string, p []any) (any, error) {
	if len(p) != 2 {
		return nil, fmt.Errorf("%s takes 2 arguments, got %d", name, len(p))
	}
	a, err := toWhole(name, p[0])
	if err != nil {
		return nil, err
	}
	b, err := toWhole(name, p[1])
	if err != nil {
		return nil, err
	}
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	if name == "gcd" {
		return x, nil
	}
	if x == 0 {
		return 0, nil
	}
	l := a / x * b
	if b != 0 && l/b != a/x {
		return nil, errors.New("lcm overflows an integer")
	}
	return l, nil
}

func twoNumbers(op string, p []any) (float64, float64, error) {
	if len(p) != 2 {
		return 0, 0, fmt.Errorf("%s takes 2 operands", op)
	}
	a, err := toFloat(op, p[0])
	if err != nil {
		return 0, 0, err
	}
	b, err := toFloat(op, p[1])
	if err != nil {
		return 0, 0, err
	}
	return a, b, nil
}

func toFloat(name string, v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case nil:
		return 0, fmt.Errorf("%s needs a number, got nil", name)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return 0, fmt.Errorf("%s needs a number, got the string %q", name, truncate(rv.String(), 40))
	case reflect.Slice, reflect.Array:
		return 0, fmt.Errorf("%s needs a number, got a list", name)
	}
	return 0, fmt.Errorf("%s needs a number, got %T", name, v)
}

func toWhole(name string, v any) (int, error) {
	if i, ok := v.(int); ok {
		return i, nil
	}
	f, err := toFloat(name, v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%s needs a whole number, got %s", name, fmtNum(f))
	}
	return int(f), nil
}
