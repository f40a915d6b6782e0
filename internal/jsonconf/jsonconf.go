// Package jsonconf is what the JSON files of the worker's tool sources
// (TOOLS_CONFIG, MCP_CONFIG) share: loading with errors that name the file,
// strict decoding, URL checks and "${NAME}" expansion.
package jsonconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Load reads the file at path and parses its content with parse. Errors
// start with what, the kind of file (e.g. "mcp: config"): "<what>: <error>"
// when the file cannot be read (the error names the path), and
// "<what> <path>: <error>" when its content is wrong.
func Load[T any](path, what string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return v, nil
}

// DecodeStrict decodes one JSON value into v; unknown fields and anything
// after the value are errors.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// IsHTTPURL reports whether s is an absolute http or https URL with a host.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ExpandEnv replaces "${NAME}" with the worker's variable NAME. A variable
// that is not set is an error, so that a missing token shows when the file
// loads instead of as a refused call later. A "${" without its "}" is kept
// as it is.
func ExpandEnv(v string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		name := v[i+2 : i+j]
		val, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("${%s} is not set in the worker's environment", name)
		}
		b.WriteString(v[:i])
		b.WriteString(val)
		v = v[i+j+1:]
	}
}

// CheckExpansions checks that every value of m expands (ExpandEnv); the
// error names field and the key.
func CheckExpansions(field string, m map[string]string) error {
	for k, v := range m {
		if _, err := ExpandEnv(v); err != nil {
			return fmt.Errorf("%s: %s: %w", field, k, err)
		}
	}
	return nil
}
