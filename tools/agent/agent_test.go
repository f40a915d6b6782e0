package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

var agentTools = []string{
	"ask_user", "background_subagents", "calculate", "chat_history", "error_history", "html_template", "list_chatbot", "public_api_list",
	"read_result", "reasoning_guide", "send_to_chatbot", "store_secret", "subagents", "test_tool", "write_error", "write_result", "write_todo",
}

func TestRegisterDefinitions(t *testing.T) {
	e := newEnv(t, nil)
	require.Equal(t, agentTools, e.reg.Names())

	type want struct {
		concurrent  bool
		effect      tools.SideEffect
		confirm     tools.ConfirmPolicy
		interactive bool
	}
	wants := map[string]want{
		"calculate":            {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"write_todo":           {true, tools.Idempotent, tools.ConfirmNever, false},
		"chat_history":         {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"write_error":          {true, tools.Idempotent, tools.ConfirmNever, false},
		"error_history":        {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"store_secret":         {false, tools.AtMostOnce, tools.ConfirmNever, false},
		"public_api_list":      {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"html_template":        {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"reasoning_guide":      {true, tools.ReadOnly, tools.ConfirmNever, false},
		"write_result":         {false, tools.Idempotent, tools.ConfirmNever, false},
		"ask_user":             {false, tools.ReadOnly, tools.ConfirmNever, true},
		"read_result":          {false, tools.ReadOnly, tools.ConfirmNever, false},
		"subagents":            {true, tools.ReadOnly, tools.ConfirmNever, false},
		"background_subagents": {true, tools.ReadOnly, tools.ConfirmNever, false},
		"test_tool":            {true, tools.ReadOnly, tools.ConfirmByClass, false},
		"list_chatbot":         {true, tools.ReadOnly, tools.ConfirmNever, false},
		"send_to_chatbot":      {true, tools.Idempotent, tools.ConfirmNever, false},
	}
	for _, name := range agentTools {
		t.Run(name, func(t *testing.T) {
			d, ok := e.reg.Lookup(name)
			require.True(t, ok)
			w := wants[name]
			require.Equal(t, w.concurrent, d.Concurrent, "concurrent")
			require.Equal(t, w.effect, d.SideEffect, "side effect")
			require.Equal(t, w.confirm, d.Confirm, "confirm policy")
			require.Equal(t, w.interactive, d.Interactive, "interactive")
			require.Equal(t, tools.SourceBuiltin, d.Source)
			require.NotEmpty(t, d.Description)
			require.Positive(t, d.EffectiveTimeout())

			var s map[string]any
			require.NoError(t, json.Unmarshal(d.Parameters, &s))
			require.Equal(t, "object", s["type"])
			require.Equal(t, false, s["additionalProperties"], "unknown arguments are refused")
			props, _ := s["properties"].(map[string]any)
			for pname, p := range props {
				desc, _ := p.(map[string]any)["description"].(string)
				require.NotEmpty(t, desc, "property %s has a description", pname)
			}
			_, err := tools.CompileSchema(d.Parameters)
			require.NoError(t, err)
		})
	}
	_, ok := e.reg.Lookup(tools.FindTools)
	require.False(t, ok, "find_tools belongs to the engine")
}

func TestRegisterNeedsSecrets(t *testing.T) {
	err := Register(tools.NewRegistry(), Config{})
	require.ErrorContains(t, err, "Config.Secrets or Config.SecretKey is required")

	err = Register(tools.NewRegistry(), Config{SecretKey: []byte("short")})
	require.ErrorContains(t, err, "want 32")
}

func TestRegisterWithSecretKey(t *testing.T) {
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	reg := tools.NewRegistry()
	require.NoError(t, Register(reg, Config{SecretKey: key}))

	e := &env{reg: reg}
	got := e.mustCall(t, "store_secret", tools.Request{SessionID: "s-key"}, `{"name":"K","value":"v4lue-of-K"}`)
	require.NotContains(t, got, "v4lue-of-K")
	require.Contains(t, got, "memory only", "the store built from the key is in process")
}

func TestRegisterTwiceFails(t *testing.T) {
	e := newEnv(t, nil)
	err := Register(e.reg, Config{Secrets: e.secrets})
	require.ErrorContains(t, err, "already registered")
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	require.Equal(t, DefaultTTL, c.TTL)
	require.Equal(t, DefaultMaxExpressionChars, c.MaxExpressionChars)
	require.Equal(t, uint(DefaultCalcMemoryBudget), c.CalcMemoryBudget)
	require.Equal(t, DefaultMaxTodoItems, c.MaxTodoItems)
	require.Equal(t, DefaultMaxErrors, c.MaxErrors)
	require.Equal(t, DefaultHistoryScan, c.HistoryScan)
	require.Equal(t, DefaultHistoryMessageChars, c.HistoryMessageChars)
	require.Equal(t, DefaultHistoryMaxLimit, c.HistoryMaxLimit)
	require.Equal(t, DefaultMaxTemplateChars, c.MaxTemplateChars)
	require.Equal(t, DefaultMaxTemplateDataBytes, c.MaxTemplateDataBytes)
	require.Equal(t, DefaultMaxTemplateOutput, c.MaxTemplateOutput)
	require.Equal(t, DefaultTemplateSteps, c.TemplateSteps)
	require.Equal(t, DefaultMaxResultChars, c.MaxResultChars)
	require.Equal(t, DefaultMaxSecretChars, c.MaxSecretChars)

	kept := Config{TTL: -1, MaxTodoItems: 3}.withDefaults()
	require.Negative(t, kept.TTL)
	require.Equal(t, 3, kept.MaxTodoItems)
}

// TestSchemasRejectBadInput checks each tool's schema the way pass 1 does
// (P1.7): the listed arguments must fail validation, naming the field.
func TestSchemasRejectBadInput(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		tool, args, want string
	}{
		{"calculate", `{}`, "expression"},
		{"calculate", `{"expression":42}`, "expression"},
		{"calculate", `{"expression":"` + strings.Repeat("1+", 2100) + `1"}`, "expression"},
		{"calculate", `{"expression":"1","extra":true}`, "extra"},
		{"write_todo", `{}`, "items"},
		{"write_todo", `{"items":"buy milk"}`, "items"},
		{"write_todo", `{"items":[{"text":"a"}]}`, "done"},
		{"write_todo", `{"items":[{"text":"","done":false}]}`, "text"},
		{"write_todo", `{"items":[{"text":"a","done":"yes"}]}`, "done"},
		{"chat_history", `{"limit":0}`, "limit"},
		{"chat_history", `{"limit":"ten"}`, "limit"},
		{"chat_history", `{"query":"x","mode":"read"}`, "mode"},
		{"write_error", `{"tool":"run_command","error":"exit 1"}`, "outcome"},
		{"write_error", `{"tool":"run_command","error":"exit 1","outcome":"maybe"}`, "outcome"},
		{"write_error", `{"error":"exit 1","outcome":"resolved"}`, "tool"},
		{"error_history", `{"mode":"write"}`, "mode"},
		{"error_history", `{"tool":"run_command","mode":"read"}`, "mode"},
		{"error_history", `{"limit":1000}`, "limit"},
		{"store_secret", `{"name":"TOKEN"}`, "value"},
		{"store_secret", `{"name":"TOKEN","value":""}`, "value"},
		{"store_secret", `{"name":"has space","value":"x"}`, "name"},
		{"store_secret", `{"name":"TOKEN","value":123}`, "value"},
		{"public_api_list", `{"query":["weather"]}`, "query"},
		{"public_api_list", `{"search":"weather"}`, "search"},
		{"html_template", `{}`, "oneOf"},
		{"html_template", `{"name":"page","template":"<p>x</p>"}`, "oneOf"},
		{"html_template", `{"name":"nope"}`, "name"},
		{"html_template", `{"name":"page","data":[1,2]}`, "data"},
		{"reasoning_guide", `{"topic":7}`, "topic"},
		{"write_result", `{}`, "content"},
		{"write_result", `{"content":"x","format":"pdf"}`, "format"},
		{"ask_user", `{"questions":[]}`, "questions"},
		{"ask_user", `{"questions":"why?"}`, "questions"},
		{"ask_user", `{}`, "questions"},
		{"ask_user", `{"questions":[""]}`, "questions"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args[:min(len(tt.args), 40)], func(t *testing.T) {
			d, ok := e.reg.Lookup(tt.tool)
			require.True(t, ok)
			errs := tools.Validate(d.Parameters, json.RawMessage(tt.args))
			require.NotEmpty(t, errs, "arguments %s must be refused", tt.args)
			require.Contains(t, strings.Join(errs, "; "), tt.want)
		})
	}
}
