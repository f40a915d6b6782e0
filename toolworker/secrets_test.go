package toolworker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/tools/secrets"
)

func secretTool(ran *int) Tool {
	return New("secret_echo", func(_ context.Context, _ Call, a struct {
		Token string `json:"token"`
	}) (any, error) {
		*ran++
		if a.Token == "fail v-0123456789" {
			return nil, errors.New("refused " + a.Token)
		}
		return a.Token, nil
	}, ReadOnly())
}

// A call that sends a secret (Y3, T9): the function gets the value in its
// arguments; the result and a failure's message leave the tool worker
// sealed with the queue's key; a tool worker without that key refuses
// the call without running it.
func TestSealedCallY3(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 7
	t.Setenv(EnvToolKey, base64.StdEncoding.EncodeToString(key))
	ran := 0
	tl := secretTool(&ran)
	sealed, err := secrets.Seal(key, "v-0123456789")
	require.NoError(t, err)
	in := CallInput{V: WireVersion, Tool: "secret_echo", SchemaHash: tl.decl.SchemaHash,
		ArgsJSON: `{"token":"x {{secret:api}} y \u007b{secret:other}}"}`, Secrets: map[string]string{"api": sealed}}

	res, err := tl.answer(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, res.Content)
	require.True(t, secrets.IsSealed(res.Sealed))
	plain, err := secrets.Open(key, res.Sealed)
	require.NoError(t, err)
	var inner CallResult
	require.NoError(t, json.Unmarshal([]byte(plain), &inner))
	require.Equal(t, []Item{Text("x v-0123456789 y {{secret:other}}")}, inner.Content, "a placeholder the call did not send stays")

	in.ArgsJSON = `{"token":"fail {{secret:api}}"}`
	_, err = tl.answer(context.Background(), in)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, FailureSealed, app.Type())
	require.NotContains(t, app.Error(), "v-0123456789")
	msg, err := secrets.Open(key, app.Message())
	require.NoError(t, err)
	require.Equal(t, "refused fail v-0123456789", msg)
	require.Equal(t, 2, ran)

	other := make([]byte, 32)
	t.Setenv(EnvToolKey, base64.StdEncoding.EncodeToString(other))
	res, err = tl.answer(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, ErrorSecretsUnavailable, res.ErrorCode)
	require.Contains(t, res.Content[0].Text, "secret api does not open")
	require.Equal(t, 2, ran, "the function did not run")

	t.Setenv(EnvToolKey, "")
	t.Setenv("TOOLROUND_SECRET_KEY", "")
	t.Setenv("TOOLROUND_SECRET_KEY_FILE", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	res, err = tl.answer(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, ErrorSecretsUnavailable, res.ErrorCode)
	require.Contains(t, res.Content[0].Text, "starter tool-key")
	require.Equal(t, 2, ran)
}
