package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolround/toolround/tools"
)

// TestToolArgs are the arguments of a test_tool call (G4).
type TestToolArgs struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// TestTool is G4's tool. A round runs a test_tool call as a call of the
// script_* tool it names, with its input: the same sandbox, timeout,
// side-effect class, operation id and concurrency, asked about as that call
// would be, reporting the exit code, stdout and stderr. The handler answers
// a call made anywhere else.
func TestTool() tools.Definition {
	return tools.Definition{
		Name: tools.TestTool,
		Description: "Test one of the script_* tools: run it with input exactly as a call of it would run " +
			"(same sandbox, timeout and approvals) and get its exit code, stdout and stderr, also when it fails.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"name":  {Description: "the script_* tool to run", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(200), Type: "string"},
			"input": {Description: "the arguments to run it with, as a call of it takes them", Type: "object"},
		}, "name")),
		Concurrent: true, // C1; the run itself is as concurrent as the script it tests
		SideEffect: tools.ReadOnly,
		Timeout:    time.Hour,
		Source:     tools.SourceBuiltin,
		NoDedupe:   true, // G: a test is run again each time it is asked for (P1.3)
		Handler: tools.Typed(func(context.Context, tools.Request, TestToolArgs) (tools.Result, error) {
			return tools.Result{}, errors.New("test_tool runs only in a round, which runs the script it names")
		}),
	}
}
