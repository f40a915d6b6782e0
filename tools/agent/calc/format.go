package calc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// formatValue prints a result: numbers as a person writes them, lists and
// maps in brackets, at most maxOutput characters.
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
			if size > maxOutput {
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
