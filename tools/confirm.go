package tools

import (
	"encoding/json"
	"strings"

	"github.com/toolround/toolround/approval"
)

// AllowRule approves, without asking, calls of Tool whose subject matches
// Pattern. Rules are added by a confirmation with remember set (P1.6).
//
// Deprecated: the run state's rules are approval.Rule, matched over the
// canonical arguments with approval.Match and signed with approval.Sign
// (T4). AllowRule remains for states written before; it is matched with the
// same pattern languages (see Matches).
type AllowRule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
}

// Matches reports whether the rule covers a call of tool with that subject:
// the subject itself, or the pattern read as approval.ValidatePattern
// describes (shell commands parsed, paths and URLs normalised). A pattern
// is never a plain wildcard over the subject text, which let `git *`
// approve `git status; touch X`.
func (r AllowRule) Matches(tool, subject string) bool {
	if r.Tool != tool {
		return false
	}
	if r.Pattern == subject {
		return true
	}
	args, ok := subjectArgs(tool, subject)
	return ok && approval.Match([]approval.Rule{{Tool: r.Tool, Pattern: r.Pattern}}, tool, args)
}

// subjectArgs rebuilds the arguments a subject stands for (SubjectOf), as
// far as a pattern reads them.
func subjectArgs(tool, subject string) (string, bool) {
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

// SubjectOf names what a call is about, for confirmations and allow rules:
// the definition's own Subject, else the canonical arguments.
func SubjectOf(d *Definition, args json.RawMessage) string {
	if d != nil && d.Subject != nil {
		if s := d.Subject(args); s != "" {
			return s
		}
	}
	if c, ok := Canonical(args); ok {
		return c
	}
	return strings.TrimSpace(string(args))
}

// EffectOf is the side-effect class of one call.
func EffectOf(d *Definition, args json.RawMessage) SideEffect {
	if d.Effect != nil {
		if e := d.Effect(args); e != "" {
			return e
		}
	}
	return d.SideEffect
}

// SubjectField returns a Subject function that reads one string field.
func SubjectField(field string) func(json.RawMessage) string {
	return func(args json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return ""
		}
		s, _ := m[field].(string)
		return s
	}
}

// SensitivePath reports whether a path names keys, credentials or a .env
// file: reading it always asks for confirmation (C4). See
// approval.SensitivePath.
func SensitivePath(p string) bool { return approval.SensitivePath(p) }

// ApprovalCall is what approval.Needs needs to know of one call of d with
// these arguments: the side-effect class for them, where the tool comes
// from, whether its server's read-only hints are trusted, whether it ever
// asks and whether it reads keys. canonical is Canonical(args).
func ApprovalCall(d *Definition, canonical string, args json.RawMessage) approval.Call {
	return approval.Call{
		Tool:               d.Name,
		Args:               canonical,
		ReadOnly:           EffectOf(d, args) == ReadOnly,
		MCP:                d.Source == SourceMCP,
		TrustReadOnlyHints: d.TrustReadOnlyHints,
		ConfirmNever:       d.Confirm == ConfirmNever || d.Source == SourceClient,
		Sensitive:          d.Sensitive != nil && d.Sensitive(args),
	}
}
