package workflows

import "go.temporal.io/sdk/workflow"

// toolKind is one way pass 2 runs a call (P2): its start begins the call
// when the call is of its kind in this round (its version markers
// included) and returns nil otherwise. A kind lives in a file of its own;
// a new kind is that file and one line of toolKinds
// (docs/adding-a-tool.md).
type toolKind struct {
	name  string
	start func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future
}

// toolKinds in the order pass 2 asks them; the last takes every call. The
// order and the version checks inside each are what recorded histories
// replay: a kind is asked only after every kind before it declined.
var toolKinds = []toolKind{
	{"a wait for a person's answer or the client's result", func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if ti.Interactive || ti.Client {
			return r.startExternal(ctx, c, ti) // execute.go
		}
		return nil
	}},
	{"a child agent run", func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if ti.Subagent && version(ctx, changeSubagents, 1) >= 1 {
			return r.startSubagent(ctx, c, r.subagents) // subagent.go
		}
		return nil
	}},
	{"a message to a chatbot", func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if ti.Chatbot && version(ctx, changeChatbots, 1) >= 1 {
			return r.sendToChatbot(ctx, c) // chatbot_round.go
		}
		return nil
	}},
	{"an activity on a tool worker's queue", func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		if ti.Remote != nil {
			return r.startRemote(ctx, c, ti) // remote.go
		}
		return nil
	}},
	{"an activity on the worker", func(r *run, ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
		return r.startWorkerActivity(ctx, c, ti) // execute.go
	}},
}
