package workflows

// This file is kept only to replay rounds recorded before the tool
// definitions carried their own facts (tools.Definition: Rules, Reason,
// ReadsPaths, TouchesPath), that is before Snapshot.ToolFacts. Those rounds
// recorded snapshots without the facts, and the round then knew them by the
// built-ins' names. Delete it, with the Snapshot.ToolFacts field, when no
// history recorded before 2026-12-02 needs to replay: nothing else reads
// these names, and no new tool belongs here.

import (
	"encoding/json"
	"strings"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
)

// pastFact is what the round knew of a built-in by its name.
type pastFact struct {
	kind        approval.Kind
	reason      string
	readsPaths  bool
	touchesPath bool
}

// pastFacts are the built-ins' facts as the round knew them by name. Never
// change them: they are the record of how old rounds ran.
var pastFacts = map[string]pastFact{
	"run_command":        {kind: approval.KindCommand, reason: "it runs a shell command"},
	"background_command": {kind: approval.KindCommand, reason: "it starts or stops a background command"},
	"edit_file":          {kind: approval.KindPath, reason: "it changes {path}", touchesPath: true},
	"remove_file":        {kind: approval.KindPath, reason: "it removes {path}", touchesPath: true},
	"restore_file":       {kind: approval.KindPath, reason: "it restores an earlier version of {path}", touchesPath: true},
	"read_files":         {kind: approval.KindPath, readsPaths: true},
	"file_history":       {kind: approval.KindPath},
	"http_request":       {kind: approval.KindRequest},
	"fetch_page":         {kind: approval.KindURL},
	"download_file":      {kind: approval.KindDownload, reason: "it downloads to {path}", touchesPath: true},
}

// tool is the snapshot's ToolInfo of name, with the facts of pastFacts
// when the snapshot was recorded without them.
func (s *Snapshot) tool(name string) ToolInfo {
	ti := s.Tools[name]
	if !s.ToolFacts {
		f := pastFacts[name]
		ti.ReadsPaths, ti.TouchesPath = f.readsPaths, f.touchesPath
	}
	return ti
}

// approvalOf is what approval.Needs needs to know of a call: the
// snapshot's facts with the call's current arguments, with the facts of
// pastFacts when the snapshot was recorded without them. A call the
// snapshot knows nothing of asks.
func (s *Snapshot) approvalOf(c *Call) approval.Call {
	ac := approval.Call{Tool: c.Tool}
	if c.Facts.Approval != nil {
		ac = *c.Facts.Approval
	}
	if !s.ToolFacts {
		f := pastFacts[c.Tool]
		ac.Kind, ac.Reason, ac.ReadsPaths = f.kind, f.reason, f.readsPaths
	}
	ac.Args = Canonical(c.Args)
	return ac
}

// allowed reports whether a rule remembered in the run state approves the
// call (P1.6): rounds recorded before the approvals version only.
func allowed(st *round.RunState, tool, subject string) bool {
	for _, r := range st.Allow {
		if pastRuleMatches(r.Tool, r.Pattern, tool, subject) {
			return true
		}
	}
	return false
}

// pastRuleMatches reports whether an unsigned rule of those rounds covers a
// call of tool with that subject: the subject itself, or the pattern read
// as approval.ValidatePattern describes (shell commands parsed, paths and
// URLs normalised). A pattern is never a plain wildcard over the subject
// text, which let `git *` approve `git status; touch X`.
func pastRuleMatches(ruleTool, pattern, tool, subject string) bool {
	if ruleTool != tool {
		return false
	}
	if pattern == subject {
		return true
	}
	args, ok := pastSubjectArgs(tool, subject)
	return ok && approval.Match([]approval.Rule{{Tool: ruleTool, Pattern: pattern}}, pastFacts[tool].kind, tool, args)
}

// pastSubjectArgs rebuilds the arguments a subject stands for
// (tools.SubjectOf), as far as a pattern reads them.
func pastSubjectArgs(tool, subject string) (string, bool) {
	var m map[string]string
	switch tool {
	case "run_command", "background_command":
		m = map[string]string{"command": subject}
	case "edit_file", "remove_file", "restore_file", "file_history":
		m = map[string]string{"path": subject}
	case "fetch_page":
		m = map[string]string{"url": subject}
	case "http_request":
		method, u, ok := strings.Cut(subject, " ")
		if !ok {
			return "", false
		}
		m = map[string]string{"method": method, "url": u}
	case "download_file":
		return "", false // its subject is the path alone; only the exact subject matches
	default:
		// Tools without a Subject use their canonical arguments.
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(subject), &obj) != nil || obj == nil {
			return "{}", true
		}
		return subject, true
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	return string(b), true
}
