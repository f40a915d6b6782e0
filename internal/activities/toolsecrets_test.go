package activities

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/toolworker"
)

// The values a user tool's call sends leave ToolSecrets sealed for the
// queue, and OpenToolResult opens the tool's sealed answer and redacts
// them, in its text and JSON items and in a failure's message (Y3, T9).
func TestToolSecretsSealAndRedactY3(t *testing.T) {
	key := make([]byte, 32)
	key[3] = 9
	store, err := secrets.NewStore(key, secrets.StoreOptions{})
	require.NoError(t, err)
	const value = "v-5f2a9c1e77"
	ctx := context.Background()
	require.NoError(t, store.Put(ctx, "s1", "api", value))
	a := &Activities{SecretStore: store}

	out, err := a.ToolSecrets(ctx, wire.ToolSecretsInput{SessionID: "s1", Queue: "q", Names: []string{"api"}})
	require.NoError(t, err)
	require.Empty(t, out.Missing)
	qk := secrets.QueueKey(key, "q")
	plain, err := secrets.Open(qk, out.Sealed["api"])
	require.NoError(t, err)
	require.Equal(t, value, plain)
	_, err = secrets.Open(secrets.QueueKey(key, "other"), out.Sealed["api"])
	require.Error(t, err, "another queue's key opens nothing")

	missing, err := a.ToolSecrets(ctx, wire.ToolSecretsInput{SessionID: "s1", Queue: "q", Names: []string{"api", "nope"}})
	require.NoError(t, err)
	require.Equal(t, "nope", missing.Missing)

	answer := toolworker.CallResult{V: 1, Content: []toolworker.Item{
		toolworker.Text("got " + base64.StdEncoding.EncodeToString([]byte("user:"+value))),
		{Type: "json", JSON: json.RawMessage(`{"token":"` + value + `","n":1}`)},
	}}
	b, err := json.Marshal(answer)
	require.NoError(t, err)
	sealed, err := secrets.Seal(qk, string(b))
	require.NoError(t, err)
	res, err := a.OpenToolResult(ctx, wire.OpenToolResultInput{SessionID: "s1", Queue: "q", Names: []string{"api"}, Sealed: sealed})
	require.NoError(t, err)
	require.Empty(t, res.Sealed)
	require.Contains(t, res.Content[0].Text, "[secret:api]")
	require.JSONEq(t, `{"token":"[secret:api]","n":1}`, string(res.Content[1].JSON))
	whole, _ := json.Marshal(res)
	require.NotContains(t, string(whole), value)

	msg, err := secrets.Seal(qk, "refused "+value)
	require.NoError(t, err)
	res, err = a.OpenToolResult(ctx, wire.OpenToolResultInput{SessionID: "s1", Queue: "q", Names: []string{"api"}, Sealed: msg, Failure: true})
	require.NoError(t, err)
	require.Equal(t, "refused [secret:api]", res.Content[0].Text)

	wrong, err := secrets.Seal(secrets.QueueKey(key, "other"), string(b))
	require.NoError(t, err)
	_, err = a.OpenToolResult(ctx, wire.OpenToolResultInput{SessionID: "s1", Queue: "q", Names: []string{"api"}, Sealed: wrong})
	require.Error(t, err, "an answer sealed for another queue does not open")
}
