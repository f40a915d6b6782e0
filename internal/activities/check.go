package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// CheckFiles tells a round which of the results it is about to serve again
// are stale (U3): for each entry, the tool that made it looks at the files
// it read again (tools.Definition.Changed). An entry whose tool is gone or
// cannot look counts as changed, so its call runs again rather than
// repeating an answer that may be old.
func (a *Activities) CheckFiles(ctx context.Context, in wire.CheckFilesInput) (wire.CheckFilesOutput, error) {
	var out wire.CheckFilesOutput
	// The input names no session; the round's workflow id does (W1). Without
	// it a tool in session mode has no workspace to look in, and every
	// entry counts as changed.
	if activity.IsActivity(ctx) {
		if session, ok := names.SessionOfWorkflowID(activity.GetInfo(ctx).WorkflowExecution.ID); ok {
			ctx = tools.WithSession(ctx, session)
		}
	}
	for _, c := range in.Checks {
		if err := ctx.Err(); err != nil {
			return wire.CheckFilesOutput{}, err
		}
		var def *tools.Definition
		if a.Registry != nil {
			def, _ = a.Registry.Lookup(c.Tool)
		}
		if def == nil || def.Changed == nil {
			out.Changed = append(out.Changed, c.Key)
			continue
		}
		files := make(map[string]tools.FileState, len(c.Files))
		for p, s := range c.Files {
			files[p] = tools.FileState{Size: s.Size, ModTime: s.ModTime, SHA256: s.SHA256, Missing: s.Missing}
		}
		if changed := def.Changed(ctx, files); len(changed) > 0 {
			a.logger().Debug("a repeat's files changed; the call runs again", "tool", c.Tool, "paths", changed)
			out.Changed = append(out.Changed, c.Key)
		}
	}
	return out, nil
}

// fileStates is a result's tools.FileState map on the wire.
func fileStates(m map[string]tools.FileState) map[string]round.FileState {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]round.FileState, len(m))
	for p, s := range m {
		out[p] = round.FileState{Size: s.Size, ModTime: s.ModTime, SHA256: s.SHA256, Missing: s.Missing}
	}
	return out
}
