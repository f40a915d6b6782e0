package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/tools"
)

// toolKind is one way pass 2 runs a call (P2), one tools.Kind: its start
// begins a call of its kind (its version markers included), or returns
// nil when this round does not run it that way, and the last kind takes
// it. A kind is a file of its own and one line of toolKinds; the tools of
// that kind name it in their definition (tools.Definition.Kind,
// docs/adding-a-tool.md).
type toolKind struct {
	kind  tools.Kind
	start func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future
}

// toolKinds are the kinds a round runs, the last taking every call the
// others do not. The version checks inside each are what recorded
// histories replay (TestKindsAreOneTable).
var toolKinds = []toolKind{
	{tools.KindWait, func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		return r.startExternal(ctx, c, ti) // execute.go
	}},
	{tools.KindChildRun, func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if Version(ctx, changeSubagents, 1) >= 1 {
			return r.startSubagent(ctx, c, r.subagents) // subagent.go
		}
		return nil
	}},
	{tools.KindChatbot, func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if Version(ctx, changeChatbots, 1) >= 1 {
			return r.sendToChatbot(ctx, c) // chatbot_round.go
		}
		return nil
	}},
	{tools.KindToolWorker, func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		return r.startRemote(ctx, c, ti) // remote.go
	}},
	{tools.KindActivity, func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		return r.startWorkerActivity(ctx, c, ti) // execute.go
	}},
}

// Kinds are the kinds of tool a worker's rounds run, in the order of
// their table. A registered tool of another kind is one the worker lacks
// (RegistryCatalog.Snapshot).
func Kinds() []tools.Kind {
	out := make([]tools.Kind, len(toolKinds))
	for i, k := range toolKinds {
		out[i] = k.kind
	}
	return out
}

// runs: a line of toolKinds runs tools of kind k.
func runs(k tools.Kind) bool {
	for _, tk := range toolKinds {
		if tk.kind == k {
			return true
		}
	}
	return false
}

// kind is how the round runs the tool's calls, as the snapshot recorded
// it, or as an older snapshot named it by its facts (legacy.go).
func (ti ToolInfo) kind() tools.Kind {
	if ti.Kind != "" {
		return ti.Kind
	}
	return ti.pastKind()
}

// startKind starts a call through its kind's line of toolKinds, or the
// last line when that kind does not run it in this round.
func (r *run) startKind(ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
	k := ti.kind()
	for _, tk := range toolKinds[:len(toolKinds)-1] {
		if tk.kind == k {
			if f := tk.start(r, ctx, c, ti); f != nil {
				return f
			}
			break
		}
	}
	return toolKinds[len(toolKinds)-1].start(r, ctx, c, ti)
}
