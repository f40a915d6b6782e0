package agent

import (
	"context"
	"errors"
	"time"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// SubagentTimeout bounds a subagents call: the child run's own limits
// (max_rounds, max_seconds) end it well before.
const SubagentTimeout = 24 * time.Hour

// Subagents is G1's tool. A round runs its calls as child agent runs
// (tools.Definition.ChildRun); the handler answers a call made anywhere
// else, which has no run to be the child of.
func Subagents() tools.Definition {
	return tools.Definition{
		Name: tools.Subagents,
		Description: "Run a part of the task as a subagent: an agent of its own, with your tools (less exclude_tools), " +
			"that works on task until it answers, then returns its final answer. Several subagents of one message run side by side. " +
			"Give it everything it needs in task: it does not see this conversation.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"task":          {Description: "what the subagent is to do, with all it needs to know", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(256 << 10), Type: "string"},
			"name":          {Description: "a short label for the subagent, shown with its approvals and events", MaxLength: tools.Ptr(80), Type: "string"},
			"system_prompt": {Description: "instructions that join the subagent's system prompt", MaxLength: tools.Ptr(64 << 10), Type: "string"},
			"exclude_tools": {Description: "tools the subagent does not get", Type: "array", Items: &tools.JSONSchema{Type: "string", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(200)}, MaxItems: tools.Ptr(256)},
		}, "task")),
		Concurrent: true, // C1: several subagents of a round side by side under the bound
		SideEffect: tools.ReadOnly,
		Confirm:    tools.ConfirmNever, // it never asks; its children's calls do
		Timeout:    SubagentTimeout,
		Source:     tools.SourceBuiltin,
		NoDedupe:   true, // G: a subagent's answer never enters the dedupe map (P1.3)
		ChildRun:   true,
		Handler: tools.Typed(func(context.Context, tools.Request, round.SubagentArgs) (tools.Result, error) {
			return tools.Result{}, errors.New("subagents runs only in a round, which starts the subagent as its child run")
		}),
	}
}
