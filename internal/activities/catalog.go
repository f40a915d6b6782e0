package activities

import (
	"context"

	"github.com/toolround/toolround/tools"
)

// ListTools returns the tools this worker offers provider: its whole
// registry (built-ins, MCP servers, TOOLS_CONFIG), as `starter tools` prints
// them.
func (a *Activities) ListTools(_ context.Context, provider string) (tools.Toolset, error) {
	ts := a.Registry.ToolsFor(provider, nil)
	if a.Unavailable != nil {
		ts.Unavailable = a.Unavailable()
	}
	if a.Queues != nil {
		ts.Queues = a.Queues()
	}
	return ts, nil
}
