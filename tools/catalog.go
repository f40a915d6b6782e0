package tools

import "strings"

// Names of the tools the engine itself treats specially.
const (
	FindTools   = "find_tools"
	RunTool     = "run_tool"
	ReadFiles   = "read_files"
	HTTPRequest = "http_request"
	AskUser     = "ask_user"
	StoreSecret = "store_secret"
	WriteError  = "write_error"
	ReadResult  = "read_result"
	Subagents   = "subagents"
	TestTool    = "test_tool"
	// ScriptPrefix starts the names of the configured script tools.
	ScriptPrefix = "script_"

	// ProviderClaudeCode is the one provider that receives every schema up front (S2).
	ProviderClaudeCode = "claude-code"
)

// AlwaysLoaded is the tools array of every provider but claude-code (S1),
// besides the client's own tools.
var AlwaysLoaded = []string{
	"find_tools", "run_tool", "reasoning_guide", "write_todo", "chat_history",
	"ask_user", "write_result", "read_result",
}

// retired maps removed and renamed tools to the message a call of them gets (C3).
var retired = map[string]string{
	"run_command_background": "tool run_command_background was renamed: call background_command instead",
	"run_websocket":          "tool run_websocket was removed in v1.3.2 and has no replacement",
	"run_command_readonly":   "tool run_command_readonly was removed in v1.0.25: use run_command",
	"find_note":              "tool find_note was removed in v1.0.23",
}

const apiToolsRemoved = "user-defined api_* tools were removed in v1.3.2: find the API with public_api_list, then call it with http_request"

// Retired returns the message for a removed or renamed tool name.
func Retired(name string) (string, bool) {
	if msg, ok := retired[name]; ok {
		return msg, true
	}
	if strings.HasPrefix(name, "api_") {
		return "tool " + name + " does not exist: " + apiToolsRemoved, true
	}
	return "", false
}
