package jsonconf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"a": 1}`), 0o600))
	parse := func(data []byte) (map[string]int, error) {
		var m map[string]int
		if err := DecodeStrict(data, &m); err != nil {
			return nil, err
		}
		if m["a"] != 1 {
			return nil, errors.New("a is not 1")
		}
		return m, nil
	}

	m, err := Load(good, "x: config", parse)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"a": 1}, m)

	missing := filepath.Join(dir, "missing.json")
	_, err = Load(missing, "x: config", parse)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "x: config: open "+missing)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"a": 2}`), 0o600))
	_, err = Load(bad, "x: config", parse)
	require.EqualError(t, err, "x: config "+bad+": a is not 1")
}

func TestDecodeStrict(t *testing.T) {
	type entry struct {
		Name string `json:"name"`
	}
	for _, tc := range []struct {
		in, err string
	}{
		{`{"name": "a"}`, ""},
		{` {"name": "a"} `, ""},
		{`{"name": "a", "other": 1}`, `json: unknown field "other"`},
		{`{"name": "a"} {}`, "trailing data after the JSON value"},
		{`{"name": 1}`, "cannot unmarshal number"},
		{``, "EOF"},
	} {
		var e entry
		err := DecodeStrict([]byte(tc.in), &e)
		if tc.err == "" {
			require.NoError(t, err, tc.in)
			require.Equal(t, "a", e.Name)
			continue
		}
		require.ErrorContains(t, err, tc.err, tc.in)
	}
}

func TestIsHTTPURL(t *testing.T) {
	for in, want := range map[string]bool{
		"https://example.com/x": true,
		"http://127.0.0.1:8080": true,
		"ftp://example.com":     false,
		"https://":              false,
		"/relative":             false,
		"":                      false,
		"http://[::1":           false,
	} {
		require.Equal(t, want, IsHTTPURL(in), in)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("JSONCONF_TOKEN", "s3cret")
	t.Setenv("JSONCONF_EMPTY", "")
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"plain", "plain", ""},
		{"Bearer ${JSONCONF_TOKEN}", "Bearer s3cret", ""},
		{"${JSONCONF_TOKEN}-${JSONCONF_TOKEN}", "s3cret-s3cret", ""},
		{"a${JSONCONF_EMPTY}b", "ab", ""},
		{"open ${JSONCONF_TOKEN", "open ${JSONCONF_TOKEN", ""},
		{"$JSONCONF_TOKEN", "$JSONCONF_TOKEN", ""},
		{"${JSONCONF_NOT_SET_ANYWHERE}", "", "${JSONCONF_NOT_SET_ANYWHERE} is not set in the worker's environment"},
	} {
		got, err := ExpandEnv(tc.in)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	require.NoError(t, CheckExpansions("headers", map[string]string{"A": "${JSONCONF_TOKEN}"}))
	require.EqualError(t, CheckExpansions("headers", map[string]string{"A": "${JSONCONF_NOT_SET_ANYWHERE}"}),
		"headers: A: ${JSONCONF_NOT_SET_ANYWHERE} is not set in the worker's environment")
}
