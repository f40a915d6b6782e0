package tools

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)
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
