package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

const secretValue = "sk-live-ABCdef123456"

func TestStoreSecret(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			ctx := context.Background()

			t.Run("plain value", func(t *testing.T) {
				session := e.session(t)
				got := e.mustCall(t, "store_secret", tools.Request{SessionID: session}, `{"name":"OPENAI_KEY","value":"`+secretValue+`"}`)
				require.True(t, strings.HasPrefix(got, "stored secret OPENAI_KEY;"), got)
				require.Contains(t, got, "{{secret:OPENAI_KEY}}")
				require.Contains(t, got, "passed through the round unsealed")
				require.NotContains(t, got, secretValue)
				require.NotContains(t, got, "sk-live")

				v, err := e.secrets.Get(ctx, session, "OPENAI_KEY")
				require.NoError(t, err)
				require.Equal(t, secretValue, v)
			})

			t.Run("sealed by the client", func(t *testing.T) {
				session := e.session(t)
				args, err := secrets.SealToolCall(e.key, tools.StoreSecret, `{"name":"GH_TOKEN","value":"`+secretValue+`"}`)
				require.NoError(t, err)
				require.NotContains(t, args, secretValue)
				got := e.mustCall(t, "store_secret", tools.Request{SessionID: session}, args)
				require.True(t, strings.HasPrefix(got, "stored secret GH_TOKEN;"), got)
				require.NotContains(t, got, "unsealed")
				require.NotContains(t, got, secretValue)

				v, err := e.secrets.Get(ctx, session, "GH_TOKEN")
				require.NoError(t, err)
				require.Equal(t, secretValue, v)
			})

			t.Run("through run_tool", func(t *testing.T) {
				for _, shape := range []string{
					`{"name":"store_secret","args":{"name":"VIA_RUN_TOOL","value":"` + secretValue + `"}}`,
					`{"name":"store_secret","args":"{\"name\":\"VIA_RUN_TOOL\",\"value\":\"` + secretValue + `\"}"}`,
				} {
					session := e.session(t)
					sealed, err := secrets.SealToolCall(e.key, tools.RunTool, shape)
					require.NoError(t, err)
					require.NotContains(t, sealed, secretValue)
					inner := unwrapRunTool(t, sealed)
					got := e.mustCall(t, "store_secret", tools.Request{SessionID: session}, inner)
					require.NotContains(t, got, "unsealed")
					require.NotContains(t, got, secretValue)
					v, err := e.secrets.Get(ctx, session, "VIA_RUN_TOOL")
					require.NoError(t, err)
					require.Equal(t, secretValue, v)
				}
			})

			t.Run("sealed with another key", func(t *testing.T) {
				session := e.session(t)
				otherKey, err := secrets.GenerateKey()
				require.NoError(t, err)
				args, err := secrets.SealArguments(otherKey, `{"name":"FOREIGN","value":"`+secretValue+`"}`)
				require.NoError(t, err)
				res, err := e.call(t, "store_secret", tools.Request{SessionID: session}, args)
				require.ErrorContains(t, err, "does not open with this worker's key")
				require.ErrorContains(t, err, secrets.EnvKey)
				require.NotContains(t, err.Error(), secretValue)
				require.Empty(t, res.Content)
				_, err = e.secrets.Get(ctx, session, "FOREIGN")
				require.True(t, errors.Is(err, secrets.ErrNotFound))
			})
		})
	}
}

func TestStoreSecretInRedisIsEncrypted(t *testing.T) {
	e := redisEnv(t)
	session := e.session(t)
	e.mustCall(t, "store_secret", tools.Request{SessionID: session}, `{"name":"TOKEN","value":"`+secretValue+`"}`)
	all, err := e.rdb.HGetAll(context.Background(), secrets.Key(session)).Result()
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.True(t, secrets.IsSealed(all["TOKEN"]))
	require.NotContains(t, all["TOKEN"], secretValue)
	plain, err := secrets.Open(e.key, all["TOKEN"])
	require.NoError(t, err)
	require.Equal(t, secretValue, plain)
}

func TestStoreSecretFailuresNeverShowTheValue(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.MaxSecretChars = 30 })
	def, _ := e.reg.Lookup("store_secret")
	tests := []struct {
		name string
		req  tools.Request
		args string
		want string
	}{
		{"bad name", tools.Request{SessionID: "s"}, `{"name":"bad name!","value":"` + secretValue + `"}`, "name must be"},
		{"no session", tools.Request{}, `{"name":"T","value":"` + secretValue + `"}`, "no session id"},
		{"empty value", tools.Request{SessionID: "s"}, `{"name":"T","value":""}`, "value of T is empty"},
		{"too long", tools.Request{SessionID: "s"}, `{"name":"T","value":"` + strings.Repeat(secretValue, 3) + `"}`, "longer than 30"},
		{"wrong type", tools.Request{SessionID: "s"}, `{"name":"T","value":["` + secretValue + `"]}`, "string fields name and value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := def.Handler(context.Background(), tools.Request{SessionID: tt.req.SessionID, Args: []byte(tt.args)})
			require.ErrorContains(t, err, tt.want)
			require.False(t, strings.HasPrefix(err.Error(), "store_secret"), "the failure text adds the name: %s", err)
			require.NotContains(t, err.Error(), "sk-live")
			require.NotContains(t, res.Content, "sk-live")
		})
	}
}

func TestStoreSecretStorageDown(t *testing.T) {
	e := newEnv(t, downRedis(t))
	res, err := e.call(t, "store_secret", tools.Request{SessionID: "s"}, `{"name":"T","value":"`+secretValue+`"}`)
	require.True(t, strings.HasPrefix(err.Error(), "save T"), err.Error())
	require.NotContains(t, err.Error(), "sk-live")
	require.Empty(t, res.Content)
	require.False(t, tools.IsTransient(err), "store_secret runs at most once")
}

func TestStoreSecretSubjectIsTheName(t *testing.T) {
	e := newEnv(t, nil)
	def, _ := e.reg.Lookup("store_secret")
	args := json.RawMessage(`{"name":"TOKEN","value":"` + secretValue + `"}`)
	require.Equal(t, "TOKEN", tools.SubjectOf(def, args))
}

// unwrapRunTool does what pass 1 does with run_tool (P1.1): it returns the
// inner arguments as an object's text.
func unwrapRunTool(t *testing.T, args string) string {
	t.Helper()
	var outer struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	require.NoError(t, json.Unmarshal([]byte(args), &outer))
	require.Equal(t, tools.StoreSecret, outer.Name)
	var s string
	if json.Unmarshal(outer.Args, &s) == nil {
		return s
	}
	return string(outer.Args)
}
