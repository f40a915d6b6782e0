package agent

import (
	"context"
	"errors"
	"time"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// SubagentTimeout bounds a subagents call: the child run's own limits
// (max_rounds, max_seconds) end it well before.
const SubagentTimeout = 24 * time.Hour

// Subagents is G1's tool. A round runs its calls as child agent runs
// (tools.KindChildRun); the handler answers a call made anywhere
// else, which has no run to be the child of.
func Subagents() tools.Definition {
	return subagentTool(tools.Subagents,
		"Run a part of the task as a subagent: an agent of its own, with your tools (less exclude_tools), "+
			"that works on task until it answers, then returns its final answer. Several subagents of one message run side by side. "+
			"Give it everything it needs in task: it does not see this conversation. "+
			"With id instead of task, it returns the status or the answer of one of your background subagents.")
}

// BackgroundSubagents is G2's tool: the same child, started without
// waiting; its id comes back at once.
func BackgroundSubagents() tools.Definition {
	return subagentTool(wire.BackgroundSubagents,
		"Start a subagent in the background, as subagents does, and return its id at once; "+
			"call subagents or background_subagents with that id later for its status or its final answer.")
}

func subagentTool(name, description string) tools.Definition {
	return tools.Definition{
		Name:        name,
		Description: description,
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"task":          {Description: "what the subagent is to do, with all it needs to know", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(256 << 10), Type: "string"},
			"id":            {Description: "the id of one of your background subagents, to get its status or answer instead of starting one", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(300), Type: "string"},
			"name":          {Description: "a short label for the subagent, shown with its approvals and events", MaxLength: tools.Ptr(80), Type: "string"},
			"system_prompt": {Description: "instructions that join the subagent's system prompt", MaxLength: tools.Ptr(64 << 10), Type: "string"},
			"exclude_tools": {Description: "tools the subagent does not get", Type: "array", Items: &tools.JSONSchema{Type: "string", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(200)}, MaxItems: tools.Ptr(256)},
		})),
		Concurrent: true, // C1: several subagents of a round side by side under the bound
		SideEffect: tools.ReadOnly,
		Confirm:    tools.ConfirmNever, // it never asks; its children's calls do
		Timeout:    SubagentTimeout,
		Source:     tools.SourceBuiltin,
		NoDedupe:   true, // G: a subagent's answer, a look at one, never enters the dedupe map (P1.3)
		Kind:       tools.KindChildRun,
		Handler: tools.Typed(func(context.Context, tools.Request, wire.SubagentArgs) (tools.Result, error) {
			return tools.Result{}, errors.New(name + " runs only in a round, which starts the subagent as its child run")
		}),
	}
}
