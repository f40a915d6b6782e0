package ext

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// workerSecrets are variables a worker may hold, each with a value that
// must not reach a script_* process: the worker's own connections and keys,
// the usual credential names, an OpenTelemetry header with a token in it,
// an allowed prefix that carries a credential name, a lower-case spelling,
// and a harmless-looking variable that the allow-list simply does not name.
var workerSecrets = map[string]string{
	"TOOLROUND_RULE_KEY":          "leak-rule-key",
	"TOOLROUND_RULE_KEY_FILE":     "/leak/rule-key-file",
	"TOOLROUND_SECRET_KEY":        "leak-secret-key",
	"TEMPORAL_ADDRESS":            "leak-temporal:7233",
	"TEMPORAL_API_KEY":            "leak-temporal-api-key",
	"TEMPORAL_TLS_KEY":            "/leak/tls.key",
	"REDIS_URL":                   "redis://:leak-redis-password@redis:6379/0",
	"DATABASE_URL":                "postgres://leak-db",
	"DECISION_API_KEY":            "leak-decision-key",
	"GITHUB_TOKEN":                "leak-github-token",
	"AWS_SECRET_ACCESS_KEY":       "leak-aws",
	"PGPASSWORD":                  "leak-pg",
	"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer leak-otel",
	"OTEL_EXPORTER_OTLP_ENDPOINT": "https://leak-otel-collector",
	"LC_SECRET":                   "leak-lc-secret",
	"redis_url":                   "redis://leak-lower",
	"MY_APP_SETTING":              "leak-unlisted",
}

// TestScriptGetsNoWorkerSecrets is the attack: a script_* tool prints its
// whole environment while the worker's holds credentials. None of them may
// appear; the script still gets its own variables, the allowed ones, and
// what its entry's env names (explicitly, with ${NAME}).
func TestScriptGetsNoWorkerSecrets(t *testing.T) {
	for k, v := range workerSecrets {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("EXT_TEST_PASSED_ON", "chosen-by-the-operator")
	dir := t.TempDir()
	reg := register(t, Config{Tools: []ToolConfig{
		scriptTool("script_env", `env; cat /proc/self/environ | tr '\0' '\n'`, func(tc *ToolConfig) {
			tc.ReadOnly = true
			tc.Env = map[string]string{"API_TOKEN": "${EXT_TEST_PASSED_ON}"}
		}),
	}}, dir)
	res, err := run(t, reg, "script_env", `{"q":1}`)
	require.NoError(t, err)

	var leaked []string
	for k, v := range workerSecrets {
		if strings.Contains(res.Content, v) || strings.Contains(res.Content, k+"=") {
			leaked = append(leaked, k)
		}
	}
	sort.Strings(leaked)
	require.Empty(t, leaked, "worker variables that reached the script:\n%s", res.Content)

	for _, want := range []string{
		"TOOL_NAME=script_env", "TOOL_CALL_ID=call_7", `TOOL_ARGS={"q":1}`, "TOOLS_WORKDIR=" + dir,
		"TOOLROUND_OPERATION_ID=wf/run/call_7", "API_TOKEN=chosen-by-the-operator", "LANG=C.UTF-8", "PATH=",
	} {
		require.Contains(t, res.Content, want)
	}
	require.NotContains(t, res.Content, "EXT_TEST_PASSED_ON=", "only the value the entry names, not the worker's variable")
}
