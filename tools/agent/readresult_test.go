package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

type mapBlobs map[string]string

func (b mapBlobs) Get(_ context.Context, ref string) (string, error) {
	if v, ok := b[ref]; ok {
		return v, nil
	}
	return "", context.DeadlineExceeded
}

// TestReadResultServesOnlyThisRunsRefs (B3): a reference the run's budget
// did not replace gets not_this_run, the same answer whether it exists in
// the store or not; one it did is served.
func TestReadResultServesOnlyThisRunsRefs(t *testing.T) {
	blobs := mapBlobs{"toolround:blob:mine": "my result", "toolround:blob:other": "another run's result"}
	_, ts, err := build(Config{SecretKey: make([]byte, 32), Blobs: blobs, ContextTokens: 1000})
	require.NoError(t, err)
	def := ts.readResult()
	call := func(ref string, refs []string) (tools.Result, error) {
		args, _ := json.Marshal(map[string]any{"ref": ref})
		return def.Handler(context.Background(), tools.Request{Tool: tools.ReadResult, Args: args, ResultRefs: refs})
	}
	mine := []string{"toolround:blob:mine"}
	res, err := call("toolround:blob:mine", mine)
	require.NoError(t, err)
	require.Equal(t, "my result", res.Content)

	_, existing := call("toolround:blob:other", mine)
	_, missing := call("toolround:blob:nothing", mine)
	require.Error(t, existing)
	require.Error(t, missing)
	require.Contains(t, existing.Error(), "not_this_run")
	require.Equal(t, existing.Error(), missing.Error(), "the same answer whether or not the ref exists")
	_, outside := call("toolround:blob:mine", nil)
	require.Error(t, outside, "a round with no refs (outside an agent run) reads none")
	require.Equal(t, existing.Error(), outside.Error())
	require.True(t, def.NoDedupe, "read_result never enters the dedupe map (G)")
}
