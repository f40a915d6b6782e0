package approval

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCallRecordLeavesOutZeroFieldsAndReadsOldRecords: the catalog
// snapshot records a Call per call; zero fields are left out, and a record
// written with every field (as rounds recorded before did) reads the same.
func TestCallRecordLeavesOutZeroFieldsAndReadsOldRecords(t *testing.T) {
	b, err := json.Marshal(Call{Tool: "read_files", ReadOnly: true})
	require.NoError(t, err)
	require.JSONEq(t, `{"Tool":"read_files","ReadOnly":true}`, string(b))

	old := `{"Tool":"edit_file","Args":"","ReadOnly":false,"MCP":true,"TrustReadOnlyHints":false,"ConfirmNever":false,"Sensitive":true,"Kind":"command"}`
	var c Call
	require.NoError(t, json.Unmarshal([]byte(old), &c))
	require.Equal(t, Call{Tool: "edit_file", MCP: true, Sensitive: true, Kind: "command"}, c)
	again, err := json.Marshal(c)
	require.NoError(t, err)
	var back Call
	require.NoError(t, json.Unmarshal(again, &back))
	require.Equal(t, c, back)
}
