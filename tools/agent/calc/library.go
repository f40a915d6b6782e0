package calc

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"

	"github.com/expr-lang/expr/vm/runtime"

	"github.com/toolround/toolround/internal/text"
)

// function is one function an expression may call.
type function = func(params ...any) (any, error)

// entry is a function of the library by its arguments: one number, two
// numbers, or its own reading of them (any).
type entry struct {
	one func(x float64) (float64, error)
	two func(a, b float64) (float64, error)
	any function
}

// functions is the library: every name an expression may call, with what
// it takes and computes. The names that start with _ are the checked
// operators the patcher calls (checkedOps); _add, which also joins
// strings, is added by library.
var functions = map[string]entry{
	"sqrt": {one: func(x float64) (float64, error) {
		if x < 0 {
			return 0, fmt.Errorf("sqrt of a negative number (%s)", fmtNum(x))
		}
		return math.Sqrt(x), nil
	}},
	"cbrt":  {one: plain(math.Cbrt)},
	"exp":   {one: plain(math.Exp)},
	"ln":    {one: logOf("ln", math.Log)},
	"log10": {one: logOf("log10", math.Log10)},
	"log2":  {one: logOf("log2", math.Log2)},
	"log": {any: func(p ...any) (any, error) {
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
	}},
	"sin":     {one: plain(math.Sin)},
	"cos":     {one: plain(math.Cos)},
	"tan":     {one: plain(math.Tan)},
	"asin":    {one: inUnit("asin", math.Asin)},
	"acos":    {one: inUnit("acos", math.Acos)},
	"atan":    {one: plain(math.Atan)},
	"sinh":    {one: plain(math.Sinh)},
	"cosh":    {one: plain(math.Cosh)},
	"tanh":    {one: plain(math.Tanh)},
	"radians": {one: func(x float64) (float64, error) { return x * math.Pi / 180, nil }},
	"degrees": {one: func(x float64) (float64, error) { return x * 180 / math.Pi, nil }},
	"atan2":   {two: func(y, x float64) (float64, error) { return math.Atan2(y, x), nil }},
	"hypot":   {two: func(a, b float64) (float64, error) { return math.Hypot(a, b), nil }},
	"pow":     {any: checkedPow},
	"_pow":    {any: checkedPow},
	"abs":     {any: intOrFloat("abs", func(i int) (int, bool) { return -i, i != math.MinInt }, math.Abs, func(i int) bool { return i < 0 })},
	"floor":   {any: rounding("floor", math.Floor)},
	"ceil":    {any: rounding("ceil", math.Ceil)},
	"trunc":   {any: rounding("trunc", math.Trunc)},
	"round":   {any: roundFn},
	"sign": {one: func(x float64) (float64, error) {
		switch {
		case x > 0:
			return 1, nil
		case x < 0:
			return -1, nil
		}
		return 0, nil
	}},
	"int": {any: func(p ...any) (any, error) {
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
	}},
	"float": {one: plain(func(x float64) float64 { return x })},
	"min":   {any: aggregate("min", func(xs []any) (any, error) { return extreme(xs, -1) })},
	"max":   {any: aggregate("max", func(xs []any) (any, error) { return extreme(xs, 1) })},
	"sum":   {any: aggregate("sum", sumOf)},
	"mean":  {any: aggregate("mean", meanOf)},
	"avg":   {any: aggregate("avg", meanOf)},
	"median": {any: aggregate("median", func(xs []any) (any, error) {
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
	})},
	"factorial": {any: func(p ...any) (any, error) {
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
	}},
	"gcd": {any: func(p ...any) (any, error) { return gcdLcm("gcd", p) }},
	"lcm": {any: func(p ...any) (any, error) { return gcdLcm("lcm", p) }},
	"_div": {any: func(p ...any) (any, error) {
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
	}},
	"_mod": {any: func(p ...any) (any, error) {
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
	}},
	"_sub": {any: intChecked("-", func(a, b int) (int, bool) {
		s := a - b
		return s, (s < a) == (b > 0)
	}, runtime.Subtract)},
	"_mul": {any: intChecked("*", func(a, b int) (int, bool) {
		if a == 0 || b == 0 {
			return 0, true
		}
		s := a * b
		return s, s/b == a && !(a == -1 && b == math.MinInt) && !(b == -1 && a == math.MinInt)
	}, runtime.Multiply)},
}

// library is the functions table read into callable functions, with _add,
// whose joined strings are at most maxString characters.
func library(maxString int) map[string]function {
	fns := make(map[string]function, len(functions)+1)
	for name, e := range functions {
		switch {
		case e.one != nil:
			fns[name] = unary(name, e.one)
		case e.two != nil:
			fns[name] = binary(name, e.two)
		default:
			fns[name] = e.any
		}
	}
	fns["_add"] = func(p ...any) (any, error) {
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
	}
	return fns
}

// unary is a function of one number.
func unary(name string, f func(float64) (float64, error)) function {
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

// binary is a function of two numbers.
func binary(name string, f func(a, b float64) (float64, error)) function {
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

func plain(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) { return f(x), nil }
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

func intChecked(op string, f func(a, b int) (int, bool), generic func(a, b any) any) function {
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

func intOrFloat(name string, neg func(int) (int, bool), f func(float64) float64, isNeg func(int) bool) function {
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
func rounding(name string, f func(float64) float64) function {
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
func aggregate(name string, f func([]any) (any, error)) function {
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

// truncate cuts s to n bytes with the note the agent's tools print.
func truncate(s string, n int) string {
	return text.Truncate(s, n, func(cut int) string { return fmt.Sprintf("… [%d more bytes cut]", cut) })
}
