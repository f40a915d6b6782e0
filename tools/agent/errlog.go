package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

// ErrorRecord is one write_error entry, stored under the session's
// toolround:errors key.
type ErrorRecord struct {
	// ID identifies the call that wrote the record, so that a retried
	// attempt does not add it twice.
	ID         string    `json:"id"`
	Tool       string    `json:"tool"`
	Error      string    `json:"error"`
	Outcome    string    `json:"outcome"`
	Resolution string    `json:"resolution,omitempty"`
	RunID      string    `json:"run_id,omitempty"`
	Round      int       `json:"round,omitempty"`
	CallID     string    `json:"call_id,omitempty"`
	Time       time.Time `json:"time"`
}

// Outcomes of write_error.
const (
	OutcomeResolved   = "resolved"
	OutcomeUnresolved = "unresolved"
)

const (
	maxErrorText        = 4000
	defaultErrorLimit   = 20
	maxErrorLimit       = 100
	errorHistoryPreview = 1000
)

func (t *toolset) writeError() tools.Definition {
	return tools.Definition{
		Name: "write_error",
		Description: "Record a tool error and how it ended, so that later steps and runs of this session can learn from it " +
			"(read them back with error_history). After a tool failed and you succeeded another way, record it with " +
			"outcome=resolved and say what worked in resolution; record outcome=unresolved when you could not get past it.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"error":      {Description: "the error, as the tool reported it", MaxLength: tools.Ptr(maxErrorText), MinLength: tools.Ptr(1), Type: "string"},
			"outcome":    {Description: "resolved when you got past the error, unresolved otherwise", Enum: []string{OutcomeResolved, OutcomeUnresolved}, Type: "string"},
			"resolution": {Description: "what worked (or what was tried), for next time", MaxLength: tools.Ptr(maxErrorText), Type: "string"},
			"tool":       {Description: "the tool that failed", MaxLength: tools.Ptr(200), MinLength: tools.Ptr(1), Type: "string"},
		}, "tool", "error", "outcome")),
		Concurrent: true,
		SideEffect: tools.Idempotent,
		Confirm:    tools.ConfirmNever,
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		Subject:    tools.SubjectField("tool"),
		Handler:    tools.Typed(t.handleWriteError),
	}
}

type writeErrorArgs = struct {
	Tool       string `json:"tool"`
	Error      string `json:"error"`
	Outcome    string `json:"outcome"`
	Resolution string `json:"resolution"`
}

func (t *toolset) handleWriteError(ctx context.Context, req tools.Request, args writeErrorArgs) (tools.Result, error) {
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	args.Tool = strings.TrimSpace(args.Tool)
	args.Error = strings.TrimSpace(args.Error)
	args.Resolution = strings.TrimSpace(args.Resolution)
	if args.Tool == "" || args.Error == "" {
		return tools.Result{}, fmt.Errorf("tool and error must not be blank")
	}
	if args.Outcome != OutcomeResolved && args.Outcome != OutcomeUnresolved {
		return tools.Result{}, fmt.Errorf("outcome must be %q or %q, got %q", OutcomeResolved, OutcomeUnresolved, args.Outcome)
	}
	rec := ErrorRecord{
		ID:         errorRecordID(req),
		Tool:       truncate(args.Tool, 200),
		Error:      truncate(args.Error, maxErrorText),
		Outcome:    args.Outcome,
		Resolution: truncate(args.Resolution, maxErrorText),
		RunID:      req.RunID,
		Round:      req.Round,
		CallID:     req.CallID,
		Time:       time.Now().UTC(),
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return tools.Result{}, fmt.Errorf("encode record: %w", err)
	}
	tools.Checkpoint(ctx, "write_error:before_write")
	added, err := t.st.AppendOnce(ctx, errorsKey(req.SessionID), rec.ID, string(b), t.cfg.MaxErrors, t.cfg.TTL)
	if err != nil {
		return tools.Result{}, storeError("save record", err)
	}
	tools.Checkpoint(ctx, "write_error:after_write")
	msg := fmt.Sprintf("recorded %s error of %s", rec.Outcome, rec.Tool)
	if !added {
		msg += " (this call was already recorded)"
	}
	if rec.Outcome == OutcomeResolved && rec.Resolution == "" {
		msg += "; next time add a resolution that says what worked"
	}
	return tools.Text(msg), nil
}

// errorRecordID is the same for every attempt of one call, and differs
// between calls, even with equal arguments in another run.
func errorRecordID(req tools.Request) string {
	args, ok := tools.Canonical(req.Args)
	if !ok {
		args = string(req.Args)
	}
	h := sha256.New()
	for _, part := range []string{req.WorkflowID, req.RunID, fmt.Sprint(req.Round), req.CallID, args} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (t *toolset) errorHistory() tools.Definition {
	return tools.Definition{
		Name: "error_history",
		Description: "List the tool errors recorded with write_error in this session, with their outcome and resolution, newest last. " +
			"Check it before retrying something that failed: an earlier resolution may say what works.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"limit": {Description: fmt.Sprintf("how many records to return, newest last (default %d)", defaultErrorLimit), Maximum: tools.Ptr(float64(maxErrorLimit)), Minimum: tools.Ptr(1.0), Type: "integer"},
			"query": {Description: "text to look for in the error, resolution and tool name (a phrase, or words that must all appear)", MaxLength: tools.Ptr(500), Type: "string"},
			"tool":  {Description: "only errors of this tool", MaxLength: tools.Ptr(200), Type: "string"},
		})),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		NoDedupe:   true, // write_error adds records while the arguments stay the same
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(t.handleErrorHistory),
	}
}

type errorHistoryArgs = struct {
	Tool  string `json:"tool"`
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

func (t *toolset) handleErrorHistory(ctx context.Context, req tools.Request, args errorHistoryArgs) (tools.Result, error) {
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	limit := args.Limit
	if limit <= 0 {
		limit = defaultErrorLimit
	}
	limit = min(limit, maxErrorLimit)
	raw, err := t.st.List(ctx, errorsKey(req.SessionID), 0)
	if err != nil {
		return tools.Result{}, storeError("read records", err)
	}
	tool := strings.TrimSpace(args.Tool)
	match := newMatcher(args.Query)
	var hits []ErrorRecord
	unresolved := 0
	for _, item := range raw {
		var rec ErrorRecord
		if json.Unmarshal([]byte(item), &rec) != nil {
			continue
		}
		if tool != "" && !strings.EqualFold(rec.Tool, tool) {
			continue
		}
		if !match(rec.Tool + "\n" + rec.Error + "\n" + rec.Resolution) {
			continue
		}
		hits = append(hits, rec)
		if rec.Outcome != OutcomeResolved {
			unresolved++
		}
	}
	if len(hits) == 0 {
		if len(raw) == 0 {
			return tools.Text("no errors recorded in this session"), nil
		}
		return tools.Text(fmt.Sprintf("no recorded error matches (the session has %d records)", len(raw))), nil
	}
	total := len(hits)
	if len(hits) > limit {
		hits = hits[len(hits)-limit:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d recorded errors (%d unresolved)", total, unresolved)
	if total > len(hits) {
		fmt.Fprintf(&b, "; the newest %d", len(hits))
	}
	b.WriteString(", oldest first:")
	for _, rec := range hits {
		fmt.Fprintf(&b, "\n\n[%s] %s: %s", rec.Time.UTC().Format(time.RFC3339), rec.Tool, rec.Outcome)
		if rec.RunID != "" {
			fmt.Fprintf(&b, " (run %s round %d)", rec.RunID, rec.Round)
		}
		fmt.Fprintf(&b, "\nerror: %s", truncate(rec.Error, errorHistoryPreview))
		if rec.Resolution != "" {
			fmt.Fprintf(&b, "\nresolution: %s", truncate(rec.Resolution, errorHistoryPreview))
		}
	}
	return tools.Text(b.String()), nil
}
