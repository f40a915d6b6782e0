package tools

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// canonicalSeeds are arguments as models write them, valid or not.
var canonicalSeeds = []string{
	``, ` `, `{}`, `{"a":1}`, `{"b":2,"a":1}`, `{ "a" : [1, 2.50, -0, 1e3] }`,
	`{"a":{"z":null,"y":true,"x":"<&>"}}`, `{"a":1,"a":2}`, `[1,{"b":1,"a":2}]`, `"text"`, `42`, `null`,
	`{"a":1} trailing`, `{"a":`, `not json`, "{\"k\":\"\xff\"}", `{"\u00e9":"\ud83d\ude00"}`,
	strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200),
}

// FuzzCanonical checks the properties the dedupe key relies on (P1.3):
// Canonical accepts exactly valid JSON, is idempotent, ignores insignificant
// space and key order, and keeps the value.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, ok := Canonical(raw)
		if !ok {
			if json.Valid(raw) {
				t.Fatalf("Canonical refused valid JSON %q", raw)
			}
			key := DedupeKey("t", raw)
			if key != "t|"+strings.TrimSpace(string(raw)) {
				t.Fatalf("the key of invalid JSON is not its trimmed text: %q", key)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("Canonical accepted invalid JSON %q", raw)
		}
		again, ok := Canonical([]byte(c))
		if !ok || again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", raw, c, again, ok)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, raw, " ", "\t"); err == nil {
			if got, _ := Canonical(indented.Bytes()); got != c {
				t.Fatalf("insignificant space changed the canonical form: %q vs %q", got, c)
			}
		}
		dec := json.NewDecoder(strings.NewReader(c))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		if got, _ := Canonical(reversedKeys(v)); got != c {
			t.Fatalf("key order changed the canonical form: %q vs %q", got, c)
		}
		if DedupeKey("t", raw) != "t|"+c {
			t.Fatalf("DedupeKey disagrees with Canonical for %q", raw)
		}
	})
}

// reversedKeys encodes v with every object's keys in reverse order.
func reversedKeys(v any) []byte {
	var b bytes.Buffer
	var enc func(v any)
	enc = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Reverse(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				enc(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				enc(e)
			}
			b.WriteByte(']')
		case json.Number:
			b.WriteString(x.String())
		default:
			eb, _ := json.Marshal(x)
			b.Write(eb)
		}
	}
	enc(v)
	return b.Bytes()
}

var fuzzSchemas = []string{
	``,
	`{"type":"object"}`,
	`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["paths"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"s":{"type":"string","pattern":"^[a-z]+$","maxLength":5}},"required":["n"]}`,
	`{"type":"object","definitions":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/p"},"b":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
	`{"type":"object","properties":{"a":{"enum":[1,"x",null]},"b":{"type":"object","patternProperties":{"^x":{"type":"boolean"}}}}}`,
	`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
	`{"type":"object","properties":{"a":{"type":"nonsense"}}}`,
	`{"type":"object","properties":{"s":{"type":"string","pattern":"("}}}`,
	`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/x.json"}}}`,
	`{"type":"object","properties":{"a":{"$ref":"file:///etc/hostname"}}}`,
	`{"$id":"http://127.0.0.1:1/root.json","type":"object","properties":{"a":{"$ref":"other.json"}}}`,
	`[`, `{"type":"string"}`,
}

var fuzzArgs = []string{
	``, `{}`, `{"paths":["a.txt"]}`, `{"paths":[]}`, `{"paths":"a"}`, `{"n":3,"s":"abc"}`, `{"n":0,"s":"ABCDEFG"}`,
	`{"a":"x","b":true}`, `[]`, `"s"`, `5`, `null`, `{"a":`, `{"a":1} {}`, strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100),
}

// FuzzValidate checks that schema validation (P1.7), which runs in workflow
// code over client-supplied schemas and model-written arguments, never panics,
// never reaches outside the schema, answers the same twice, and reports
// arguments that are not a JSON object as exactly one violation.
func FuzzValidate(f *testing.F) {
	for i, s := range fuzzSchemas {
		f.Add([]byte(s), []byte(fuzzArgs[i%len(fuzzArgs)]))
	}
	for i, a := range fuzzArgs {
		f.Add([]byte(fuzzSchemas[i%len(fuzzSchemas)]), []byte(a))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		got := Validate(schema, args)
		if !slices.IsSorted(got) {
			t.Fatalf("violations are not sorted: %q", got)
		}
		if again := Validate(schema, args); !slices.Equal(got, again) {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		for _, v := range got {
			if strings.Contains(v, "127.0.0.1:1") && !strings.Contains(v, "outside the schema") {
				t.Fatalf("a remote reference was followed: %q", v)
			}
		}
		if len(bytes.TrimSpace(args)) == 0 {
			return
		}
		// Numbers stay text (1E700 is valid JSON though no float64 holds it).
		var v any
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if !json.Valid(args) || dec.Decode(&v) != nil {
			require.Len(t, got, 1, "invalid JSON is one violation")
			require.Contains(t, got[0], "not valid JSON")
			return
		}
		if _, obj := v.(map[string]any); !obj {
			require.Equal(t, 1, len(got), "a non-object is one violation: %q", got)
			require.Contains(t, got[0], "must be a JSON object")
			return
		}
		if len(schema) == 0 {
			require.Empty(t, got, "an empty schema accepts any object")
		}
	})
}

// TestSchemaReferencesStayInsideTheSchema: validation runs in workflow code
// over schemas that clients send with their tools, so a $ref must never make
// it fetch a URL or read a file (I/O in workflow code, a request the network
// policy never saw, a file's content in an error message).
func TestSchemaReferencesStayInsideTheSchema(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"string"}`), 0o600))

	for _, ref := range []string{srv.URL + "/s.json", "file://" + file, "file:///etc/passwd"} {
		schema := `{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`
		got := Validate(json.RawMessage(schema), json.RawMessage(`{"a":5}`))
		require.Len(t, got, 1, ref)
		require.Contains(t, got[0], "outside the schema", ref)
		_, err := CompileSchema(json.RawMessage(schema))
		require.ErrorContains(t, err, "outside the schema", ref)
	}
	based := `{"$id":"` + srv.URL + `/root.json","type":"object","properties":{"a":{"$ref":"other.json"}}}`
	require.Contains(t, strings.Join(Validate(json.RawMessage(based), json.RawMessage(`{"a":5}`)), ""), "outside the schema")
	_, err := CompileSchema(json.RawMessage(based))
	require.ErrorContains(t, err, "outside the schema")
	require.Zero(t, hits.Load(), "no request left the schema")

	local := `{"type":"object","definitions":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/p"},"n":{"$ref":"#/properties/a"}}}`
	require.Equal(t, []string{"a: Invalid type. Expected: string, given: integer"}, Validate(json.RawMessage(local), json.RawMessage(`{"a":5}`)))
	require.Empty(t, Validate(json.RawMessage(local), json.RawMessage(`{"a":"x","n":"y"}`)))
}

func TestSchemaWithDraftMetaSchemaStillCompiles(t *testing.T) {
	for _, draft := range []string{"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2020-12/schema"} {
		schema := `{"$schema":"` + draft + `","type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
		_, err := CompileSchema(json.RawMessage(schema))
		require.NoError(t, err, draft)
		require.Equal(t, []string{"(root): a is required"}, Validate(json.RawMessage(schema), json.RawMessage(`{}`)), draft)
	}
}

// TestValidateRefusesDataAfterTheObject: a second value after the arguments
// object passed validation, showed the first object's subject in the
// confirmation and failed only in the handler.
func TestValidateRefusesDataAfterTheObject(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)
	for _, args := range []string{`{"command":"ls"} {"command":"rm -rf /"}`, `{"command":"ls"} x`, `{"command":"ls"}]`} {
		got := Validate(schema, json.RawMessage(args))
		require.Len(t, got, 1, args)
		require.Contains(t, got[0], "not valid JSON", args)
	}
	require.Empty(t, Validate(schema, json.RawMessage(" {\"command\":\"ls\"}\n\t ")), "space around the object is fine")
}
