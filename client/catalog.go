package client

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

//go:generate go run ./internal/gencatalog

// catalogJSON is the built-in tools' specs as a worker registers them;
// TestCatalogSnapshotIsCurrent fails when it drifts from tools/builtin.
//
//go:embed catalog.json
var catalogJSON []byte

var builtinSpecs = sync.OnceValues(func() ([]tools.FunctionSpec, error) {
	var specs []tools.FunctionSpec
	if err := json.Unmarshal(catalogJSON, &specs); err != nil {
		return nil, fmt.Errorf("client: built-in catalog: %w", err)
	}
	return specs, nil
})

func listOnly(context.Context, tools.Request) (tools.Result, error) {
	return tools.Result{}, errors.New("this registry only lists tools; workers run them")
}

// Catalog returns a new registry that holds the built-in tools' definitions
// as workers register them, for listing: their handlers refuse to run. Add
// the tools your workers add (MCP_CONFIG's, TOOLS_CONFIG's, your own), then
// call ToolsFor. The error is not nil only if the embedded catalog is broken.
func Catalog() (*tools.Registry, error) {
	specs, err := builtinSpecs()
	if err != nil {
		return nil, err
	}
	reg := tools.NewRegistry()
	for _, s := range specs {
		if err := reg.Register(tools.Definition{Name: s.Name, Description: s.Description, Parameters: s.Parameters, Handler: listOnly}); err != nil {
			return nil, fmt.Errorf("client: built-in catalog: %w", err)
		}
	}
	return reg, nil
}

// Tools returns what a request to the model carries for provider when the
// workers run the built-in tools: the tools array with schemas, the deferred
// names and the turn-context line that lists them (SPEC S1, S2). clientTools
// are the application's own tools, appended to the array as the round input's
// client_tools. It needs no worker, Temporal, Redis or workdir; tools that a
// worker adds from MCP_CONFIG, TOOLS_CONFIG or its own code are not in it
// (see Catalog). The error is not nil only if the embedded catalog is broken.
func Tools(provider string, clientTools ...tools.ToolSpec) (tools.Toolset, error) {
	reg, err := Catalog()
	if err != nil {
		return tools.Toolset{}, err
	}
	return reg.ToolsFor(provider, clientTools), nil
}

// ToolsIn is Tools with the tools array in format f (F3): chat completions'
// {"type": "function", "function": {...}}, Anthropic's {"name",
// "description", "input_schema"} or Responses' {"type": "function", "name",
// "description", "parameters", "strict": false}. The deferred names and the
// turn-context line are the same in every format. An unknown format is an
// error.
func ToolsIn(provider string, f round.Format, clientTools ...tools.ToolSpec) (tools.FormattedToolset, error) {
	ts, err := Tools(provider, clientTools...)
	if err != nil {
		return tools.FormattedToolset{}, err
	}
	return ts.In(f)
}
