package activities

import (
	"context"

	"github.com/toolround/toolround/round"
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

// ListGatewayTools returns what the MCP gateway may list (Z2): every tool
// of this worker's registry but find_tools, run_tool and the interactive
// ones, each with the facts its annotations are made of. The console
// keeps the built-ins MCP_GATEWAY_TOOLS allows.
func (a *Activities) ListGatewayTools(_ context.Context) ([]round.GatewayTool, error) {
	out := []round.GatewayTool{}
	for _, d := range a.Registry.Definitions() {
		if d.Name == tools.FindTools || d.Name == tools.RunTool || d.Interactive || d.Source == tools.SourceClient {
			continue
		}
		out = append(out, round.GatewayTool{
			Spec:   d.Spec(),
			Source: string(d.Source),
			// T5: an MCP server's read-only hint counts only for a
			// server the operator trusts.
			ReadOnly:  d.ReadOnly() && d.Effect == nil && (d.Source != tools.SourceMCP || d.TrustReadOnlyHints),
			Workspace: d.InWorkspace(),
			Agent:     d.EffectiveKind().RunsAgent(),
		})
	}
	return out, nil
}
