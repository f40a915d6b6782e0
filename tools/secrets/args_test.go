package secrets

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

const plain = "pa$$w0rd-<&>"

// openedValue returns the plaintext of the "value" field of args.
func openedValue(t *testing.T, key []byte, args string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(args), &m))
	v, ok := m["value"].(string)
	require.True(t, ok, "value is a string in %s", args)
	require.True(t, IsSealed(v), "value is sealed in %s", args)
	got, err := Open(key, v)
	require.NoError(t, err)
	return got
}

func TestSealArguments(t *testing.T) {
	key := testKey(t)
	already, err := Seal(key, plain)
	require.NoError(t, err)
	alreadyArgs := `{"name":"API_KEY","value":"` + already + `"}`

	tests := []struct {
		name      string
		args      string
		sealed    bool // the output's value opens to plain
		unchanged bool
		wantErr   string
	}{
		{name: "plain value", args: `{"name":"API_KEY","value":"` + "pa$$w0rd-<&>" + `"}`, sealed: true},
		{name: "extra fields kept", args: `{"value":"pa$$w0rd-<&>","name":"API_KEY","note":{"a":[1,2]}}`, sealed: true},
		{name: "already sealed", args: alreadyArgs, unchanged: true},
		{name: "no value", args: `{"name":"API_KEY"}`, unchanged: true},
		{name: "not JSON", args: `{"name":"API_KEY","value":"pa$$w0rd-<&>"`, unchanged: true, wantErr: "not a JSON object"},
		{name: "array", args: `["pa$$w0rd-<&>"]`, unchanged: true, wantErr: "not a JSON object"},
		{name: "null", args: `null`, unchanged: true, wantErr: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SealArguments(key, tt.args)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, err.Error(), plain)
			} else {
				require.NoError(t, err)
			}
			if tt.unchanged {
				require.Equal(t, tt.args, got)
				return
			}
			require.NotContains(t, got, plain)
			require.Equal(t, plain, openedValue(t, key, got))
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(got), &m))
			require.Equal(t, "API_KEY", m["name"])
			if tt.name == "extra fields kept" {
				require.Equal(t, map[string]any{"a": []any{1.0, 2.0}}, m["note"])
			}
			again, err := SealArguments(key, got)
			require.NoError(t, err)
			require.Equal(t, got, again, "sealing twice changes nothing")
		})
	}
}

func TestSealToolCall(t *testing.T) {
	key := testKey(t)
	direct := `{"name":"API_KEY","value":"pa$$w0rd-<&>"}`
	innerString, err := json.Marshal(direct)
	require.NoError(t, err)

	innerOf := func(t *testing.T, out string, asString bool) string {
		var outer map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(out), &outer))
		require.JSONEq(t, `"store_secret"`, string(outer["name"]))
		if !asString {
			require.Equal(t, byte('{'), outer["args"][0], "args stay an object")
			return string(outer["args"])
		}
		var s string
		require.NoError(t, json.Unmarshal(outer["args"], &s), "args stay a string")
		return s
	}

	t.Run("direct", func(t *testing.T) {
		out, err := SealToolCall(key, "store_secret", direct)
		require.NoError(t, err)
		require.NotContains(t, out, plain)
		require.Equal(t, plain, openedValue(t, key, out))
	})
	t.Run("run_tool with object args", func(t *testing.T) {
		out, err := SealToolCall(key, "run_tool", `{"name":"store_secret","args":`+direct+`}`)
		require.NoError(t, err)
		require.NotContains(t, out, "pa$$w0rd")
		require.Equal(t, plain, openedValue(t, key, innerOf(t, out, false)))
		again, err := SealToolCall(key, "run_tool", out)
		require.NoError(t, err)
		require.Equal(t, out, again)
	})
	t.Run("run_tool with string args", func(t *testing.T) {
		out, err := SealToolCall(key, "run_tool", `{"name":"store_secret","args":`+string(innerString)+`}`)
		require.NoError(t, err)
		require.NotContains(t, out, "pa$$w0rd")
		require.Equal(t, plain, openedValue(t, key, innerOf(t, out, true)))
		again, err := SealToolCall(key, "run_tool", out)
		require.NoError(t, err)
		require.Equal(t, out, again)
	})
	unchanged := []struct{ name, tool, args string }{
		{"other tool", "http_request", `{"url":"http://x","value":"pa$$w0rd-<&>"}`},
		{"run_tool of another tool", "run_tool", `{"name":"http_request","args":{"value":"pa$$w0rd-<&>"}}`},
		{"run_tool without args", "run_tool", `{"name":"store_secret"}`},
		{"malformed run_tool of another tool", "run_tool", `{"name":"read_files"`},
	}
	for _, tt := range unchanged {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SealToolCall(key, tt.tool, tt.args)
			require.NoError(t, err)
			require.Equal(t, tt.args, out)
		})
	}
	t.Run("malformed run_tool of store_secret", func(t *testing.T) {
		args := `{"name":"store_secret","args":{"value":"pa$$w0rd-<&>"}`
		out, err := SealToolCall(key, "run_tool", args)
		require.ErrorContains(t, err, "not a JSON object")
		require.NotContains(t, err.Error(), "pa$$w0rd")
		require.Equal(t, args, out)
	})
	t.Run("run_tool with string args that are not an object", func(t *testing.T) {
		args := `{"name":"store_secret","args":"pa$$w0rd-<&>"}`
		out, err := SealToolCall(key, "run_tool", args)
		require.ErrorContains(t, err, "not a JSON object")
		require.Equal(t, args, out)
	})
}

// The tool reads its arguments as encoding/json does: keys in any letter
// case, the last of duplicate keys. Sealing must cover every spelling.
func TestSealArgumentsEverySpelling(t *testing.T) {
	key := testKey(t)
	for _, args := range []string{
		`{"name":"K","Value":"` + plain + `"}`,
		`{"name":"K","VALUE":"` + plain + `"}`,
		`{"name":"K","vAlUe":"` + plain + `"}`,
		`{"name":"K","value":"sealed:v1:AAAA","Value":"` + plain + `"}`,
		`{"name":"K","value":"` + plain + `","value":"other-dup"}`,
		`{"name":"K","value":"other-dup","value":"` + plain + `"}`,
		`{"name":"K","value":12345678}`,
		`{"name":"K","value":{"nested":"` + plain + `"}}`,
	} {
		t.Run(args, func(t *testing.T) {
			got, err := SealArguments(key, args)
			require.NoError(t, err)
			require.NotContains(t, got, plain)
			require.NotContains(t, got, "other-dup")
			require.NotContains(t, got, "12345678")
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(got), &fields))
			for k, raw := range fields {
				if k == "name" {
					continue
				}
				var v string
				require.NoError(t, json.Unmarshal(raw, &v), k)
				require.True(t, IsSealed(v), k)
			}
			again, err := SealArguments(key, got)
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestSealToolCallEveryName(t *testing.T) {
	key := testKey(t)
	direct := `{"name":"K","value":"` + plain + `"}`
	for _, tc := range []struct{ tool, args string }{
		{"Store_Secret", direct},
		{" store_secret ", direct},
		{"run_tool", `{"name":"store\u005fsecret","args":` + direct + `}`},
		{"run_tool", `{"name":"STORE_SECRET","args":` + direct + `}`},
		{"run_tool", `{"Name":"store_secret","ARGS":` + direct + `}`},
		{"run_tool", `{"name":"calculate","name":"store_secret","args":` + direct + `}`},
		{"run_tool", `{"name":"store_secret","args":{"name":"K","Value":"` + plain + `"}}`},
		{"run_tool", `{"name":"store_secret","args":"{\"name\":\"K\",\"val\u0075e\":\"` + plain + `\"}"}`},
		{"Run_Tool", `{"name":"store_secret","args":` + direct + `}`},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			got, err := SealToolCall(key, tc.tool, tc.args)
			require.NoError(t, err)
			require.NotContains(t, got, plain)
			require.NotContains(t, got, "pa$$")
		})
	}
	for _, args := range []string{
		`{"name":"store\u005fsecret","args":{"value":"` + plain + `"}`,
		`{"name":"STORE_SECRET","args":{"value":"` + plain + `"}`,
	} {
		_, err := SealToolCall(key, "run_tool", args)
		require.ErrorContains(t, err, "not a JSON object", "a malformed call that may hold a value is not submitted")
	}
}

func TestStableToolCallIsTheSameSealedOrNot(t *testing.T) {
	key := testKey(t)
	for _, tc := range []struct{ tool, args string }{
		{"store_secret", `{"name":"K","value":"` + plain + `"}`},
		{"run_tool", `{"name":"store_secret","args":{"name":"K","value":"` + plain + `"}}`},
		{"run_tool", `{"name":"store_secret","args":"{\"name\":\"K\",\"value\":\"` + plain + `\"}"}`},
	} {
		stable, err := StableToolCall(key, tc.tool, tc.args)
		require.NoError(t, err)
		require.NotContains(t, stable, plain)
		sealed, err := SealToolCall(key, tc.tool, tc.args)
		require.NoError(t, err)
		again, err := StableToolCall(key, tc.tool, sealed)
		require.NoError(t, err)
		require.Equal(t, stable, again, tc.args)

		other, err := StableToolCall(testKey(t), tc.tool, tc.args)
		require.NoError(t, err)
		require.NotEqual(t, stable, other, "keyed")
	}
	changed, err := StableToolCall(key, "store_secret", `{"name":"K","value":"`+plain+`!"}`)
	require.NoError(t, err)
	stable, err := StableToolCall(key, "store_secret", `{"name":"K","value":"`+plain+`"}`)
	require.NoError(t, err)
	require.NotEqual(t, stable, changed)
}

func TestToolCallValuesReadsEverySpelling(t *testing.T) {
	key := make([]byte, KeySize)
	sealed, err := Seal(key, "opened-value")
	require.NoError(t, err)
	require.Equal(t, []string{"plain-value"}, ToolCallValues(key, "store_secret", `{"name":"a","value":"plain-value"}`))
	require.Equal(t, []string{"opened-value"}, ToolCallValues(key, "store_secret", `{"name":"a","value":"`+sealed+`"}`))
	require.Equal(t, []string{"inner-value"}, ToolCallValues(key, "Run_Tool", `{"name":"store_secret","args":"{\"name\":\"a\",\"Value\":\"inner-value\"}"}`))
	require.Empty(t, ToolCallValues(key, "read_files", `{"value":"x"}`))
	require.Empty(t, ToolCallValues(key, "store_secret", `not json`))
	require.True(t, Holds([]string{"plain-value"})(`{"thinking":"the key is plain\u002dvalue"}`))
	require.Nil(t, Holds(nil))
}
