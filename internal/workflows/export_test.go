package workflows

import (
	"slices"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// RuleCountKey is ruleCountKey, for the recorded scenarios of counted rules
// (T15).
var RuleCountKey = ruleCountKey

// AddKind puts a line for kind k in the round's table, before the
// worker's activity, for the test's life, as a new kind's file and its
// line would: its calls are answered with answer(arguments) at once.
func AddKind(t testing.TB, k tools.Kind, answer func(args string) string) {
	old := toolKinds
	line := toolKind{k, func(_ *run, ctx workflow.Context, c *Call, _ ToolInfo) workflow.Future {
		f, set := workflow.NewFuture(ctx)
		set.Set(wire.ExecuteOutput{Content: answer(c.Args), Attempt: 1}, nil)
		return f
	}}
	toolKinds = append(append(slices.Clone(old[:len(old)-1]), line), old[len(old)-1])
	t.Cleanup(func() { toolKinds = old })
}
