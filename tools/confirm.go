package tools

import (
	"encoding/json"
	"strings"

	"github.com/toolround/toolround/approval"
)

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
// asks, whether it reads keys, what its rules match and why it asks.
// canonical is Canonical(args).
func ApprovalCall(d *Definition, canonical string, args json.RawMessage) approval.Call {
	return approval.Call{
		Tool:               d.Name,
		Args:               canonical,
		ReadOnly:           EffectOf(d, args) == ReadOnly,
		MCP:                d.Source == SourceMCP,
		TrustReadOnlyHints: d.TrustReadOnlyHints || (d.Remote != nil && d.Remote.Trusted),
		Queue:              remoteQueue(d),
		ConfirmNever:       d.Confirm == ConfirmNever || d.Source == SourceClient,
		Sensitive:          d.Sensitive != nil && d.Sensitive(args),
		Kind:               d.Rules,
		Reason:             d.Reason,
		ReadsPaths:         d.ReadsPaths,
	}
}

// remoteQueue is a user tool's queue, else "".
func remoteQueue(d *Definition) string {
	if d.Remote == nil {
		return ""
	}
	return d.Remote.Queue
}
