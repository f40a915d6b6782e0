package toolworker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hash of a schema is the same whatever the order and spacing of its
// keys, and the same as Python's json.dumps(sort_keys=True,
// separators=(",", ":")) gives (the vector below).
func TestSchemaHashIsCanonicalY1a(t *testing.T) {
	const want = "sha256:f6a7df916a5c0aba8b22d0dde009dcffc865c224d2a63a728c2792e2662b5a1e"
	for _, s := range []string{
		`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`,
		`{ "required": ["q"], "properties": { "q": { "type": "string" } }, "type": "object" }`,
	} {
		h, err := SchemaHash(json.RawMessage(s))
		require.NoError(t, err)
		require.Equal(t, want, h, s)
	}
	other, err := SchemaHash(json.RawMessage(`{"type":"object","properties":{"q":{"type":"integer"}},"required":["q"]}`))
	require.NoError(t, err)
	require.NotEqual(t, want, other)
	_, err = SchemaHash(json.RawMessage(`{"type":`))
	require.Error(t, err)
}

func TestCheckSchemaRefusesKeywordsNotEnforcedY1(t *testing.T) {
	for schema, wantErr := range map[string]string{
		`{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}]}}}`: `#/properties/p: schema keyword "prefixItems"`,
		`{"type":"object","unevaluatedProperties":false}`:                                         `#: schema keyword "unevaluatedProperties"`,
		`{"type":"object","$defs":{"A":{"type":"object","dependentRequired":{}}}}`:                `#/$defs/A: schema keyword "dependentRequired"`,
		`{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`:               `points outside the schema`,
		`{"type":"array"}`: `"type": "object"`,
		`[]`:               `JSON schema object`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"maxContains":2}]}}}`: `#/properties/a/anyOf/1: schema keyword "maxContains"`,
	} {
		err := CheckSchema(json.RawMessage(schema))
		require.Error(t, err, schema)
		require.Contains(t, err.Error(), wantErr, schema)
	}
	for _, ok := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"],"additionalProperties":false}}}`,
		`{"type":"object","properties":{"t":{"anyOf":[{"type":"string","format":"date-time"},{"type":"null"}],"default":null,"title":"T"}}}`,
		`{"type":"object","additionalProperties":false}`,
	} {
		require.NoError(t, CheckSchema(json.RawMessage(ok)), ok)
	}
}

func TestDeclCheckY1(t *testing.T) {
	good := New("lookup", func(context.Context, Call, struct {
		ID string `json:"id"`
	}) (any, error) {
		return nil, nil
	}, ReadOnly()).Decl()
	require.NoError(t, good.Check())
	for _, tc := range []struct {
		mutate func(*Decl)
		want   string
	}{
		{func(d *Decl) { d.Name = "Lookup" }, "a lower-case letter"},
		{func(d *Decl) { d.Name = "a-b" }, "a lower-case letter"},
		{func(d *Decl) { d.Name = strings.Repeat("a", 65) }, "a lower-case letter"},
		{func(d *Decl) { d.Effect = "idempotent" }, "neither"},
		{func(d *Decl) { d.SchemaHash = "md5:1" }, "schema_hash"},
		{func(d *Decl) { d.TimeoutSeconds = -1 }, "must not be negative"},
		{func(d *Decl) { d.Effect = EffectSideEffect; d.CacheSeconds = 5 }, "only a read_only tool may be cached"},
		{func(d *Decl) { d.Reconcile = true }, "only a side_effect tool reconciles"},
	} {
		d := good
		tc.mutate(&d)
		err := d.Check()
		require.Error(t, err)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestToolActivityY1a(t *testing.T) {
	tool := New("echo", func(_ context.Context, call Call, a struct {
		S    string `json:"s"`
		Mode string `json:"mode,omitempty"`
	}) (any, error) {
		switch a.Mode {
		case "fail":
			return nil, &ToolError{Message: "no such thing", Code: "not_found"}
		case "raise":
			return nil, errors.New("the database is down")
		case "bytes":
			return []byte("x"), nil
		case "big":
			return strings.Repeat("x", MaxResultBytes+1), nil
		case "chan":
			return map[string]any{"c": make(chan int)}, nil
		case "items":
			return []Item{Text("a"), JSON(map[string]int{"n": 1}), Image("image/png", "aGk=")}, nil
		case "op":
			return call.OperationID, nil
		}
		return a.S, nil
	})
	in := func(args string) CallInput {
		return CallInput{V: 1, Tool: "echo", ArgsJSON: args, SchemaHash: tool.decl.SchemaHash, OperationID: "op-1"}
	}
	ctx := context.Background()

	res, err := tool.activity(ctx, in(`{"s":"hi"}`))
	require.NoError(t, err)
	require.Equal(t, CallResult{V: 1, Content: []Item{Text("hi")}}, res)

	res, err = tool.activity(ctx, in(`{"s":"","mode":"op"}`))
	require.NoError(t, err)
	require.Equal(t, "op-1", res.Content[0].Text)

	changed := in(`{"s":"hi"}`)
	changed.SchemaHash = "sha256:" + strings.Repeat("0", 64)
	res, err = tool.activity(ctx, changed)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, ErrorSchemaChanged, res.ErrorCode)

	res, err = tool.activity(ctx, in(`{"s":1}`))
	require.NoError(t, err)
	require.Equal(t, ErrorInvalidArguments, res.ErrorCode)

	res, err = tool.activity(ctx, in(`{"s":"","mode":"fail"}`))
	require.NoError(t, err)
	require.Equal(t, CallResult{V: 1, Content: []Item{Text("no such thing")}, IsError: true, ErrorCode: "not_found"}, res)

	_, err = tool.activity(ctx, in(`{"s":"","mode":"raise"}`))
	require.EqualError(t, err, "the database is down", "any other failure fails the attempt, for the round's retry policy")

	for mode, code := range map[string]string{"bytes": ErrorBadResult, "big": ErrorResultTooLarge, "chan": ErrorBadResult} {
		res, err = tool.activity(ctx, in(`{"s":"","mode":"`+mode+`"}`))
		require.NoError(t, err, mode)
		require.True(t, res.IsError, mode)
		require.Equal(t, code, res.ErrorCode, mode)
	}

	res, err = tool.activity(ctx, in(`{"s":"","mode":"items"}`))
	require.NoError(t, err)
	require.Len(t, res.Content, 3)
	require.JSONEq(t, `{"n":1}`, string(res.Content[1].JSON))
}
