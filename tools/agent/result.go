package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

// RunResult is a run's final result as write_result stores it, in the
// session's toolround:result hash under the run id.
type RunResult struct {
	RunID   string    `json:"run_id"`
	Round   int       `json:"round"`
	Title   string    `json:"title,omitempty"`
	Format  string    `json:"format"`
	Content string    `json:"content"`
	Time    time.Time `json:"time"`
}

var resultFormats = []string{"markdown", "text", "html", "json"}

func (t *toolset) writeResult() tools.Definition {
	return tools.Definition{
		Name: "write_result",
		Description: "Record the final result of this run: the answer the user should read, complete and self-contained. " +
			"Call it once the work is done (again to replace it). It is kept with the session and shown to the user.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"content": {Description: "the result", MaxLength: tools.Ptr(t.cfg.MaxResultChars), MinLength: tools.Ptr(1), Type: "string"},
			"format":  {Description: "how content is written (default markdown)", Enum: resultFormats, Type: "string"},
			"title":   {Description: "a short title", MaxLength: tools.Ptr(200), Type: "string"},
		}, "content")),
		Concurrent: false,
		SideEffect: tools.Idempotent,
		Confirm:    tools.ConfirmNever,
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(t.handleWriteResult),
	}
}

type writeResultArgs = struct {
	Content string `json:"content"`
	Title   string `json:"title"`
	Format  string `json:"format"`
}

func (t *toolset) handleWriteResult(ctx context.Context, req tools.Request, args writeResultArgs) (tools.Result, error) {
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	if strings.TrimSpace(args.Content) == "" {
		return tools.Result{}, errors.New("content is empty; write the result itself")
	}
	if len(args.Content) > t.cfg.MaxResultChars {
		return tools.Result{}, fmt.Errorf("content is %d characters, more than the limit of %d; summarize, and save long material to a file with edit_file", len(args.Content), t.cfg.MaxResultChars)
	}
	format := args.Format
	if format == "" {
		format = "markdown"
	}
	if !slices.Contains(resultFormats, format) {
		return tools.Result{}, fmt.Errorf("format must be one of %s, got %q", strings.Join(resultFormats, ", "), format)
	}
	if format == "json" && !json.Valid([]byte(args.Content)) {
		return tools.Result{}, errors.New("format is json but content is not valid JSON")
	}
	rec := RunResult{
		RunID:   req.RunID,
		Round:   req.Round,
		Title:   strings.TrimSpace(args.Title),
		Format:  format,
		Content: args.Content,
		Time:    time.Now().UTC(),
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return tools.Result{}, fmt.Errorf("encode: %w", err)
	}
	tools.Checkpoint(ctx, "write_result:before_write")
	if err := t.st.HSet(ctx, resultKey(req.SessionID), resultField(req.RunID), string(b), t.cfg.TTL); err != nil {
		return tools.Result{}, storeError("save result", err)
	}
	tools.Checkpoint(ctx, "write_result:after_write")
	what := "result"
	if rec.Title != "" {
		what = fmt.Sprintf("result %q", rec.Title)
	}
	return tools.Text(fmt.Sprintf("recorded the run's %s (%s, %d characters)", what, format, len(args.Content))), nil
}

// resultField is the hash field of a run's result; calls without a run id
// share one field.
func resultField(runID string) string {
	if runID == "" {
		return "-"
	}
	return runID
}

func askUser() tools.Definition {
	return tools.Definition{
		Name: tools.AskUser,
		Description: "Ask the user one or more questions and wait for the answer. Use it only when you cannot go on without " +
			"the user's decision or information (a choice between approaches, a missing detail, a credential); ask everything at once.",
		Parameters: tools.Schema(`{
			"additionalProperties": false,
			"properties": {
				"questions": {
					"description": "the questions, each complete on its own",
					"items": {"maxLength": 2000, "minLength": 1, "type": "string"},
					"maxItems": 20,
					"minItems": 1,
					"type": "array"
				}
			},
			"required": ["questions"],
			"type": "object"
		}`),
		Interactive: true,
		Concurrent:  false,
		SideEffect:  tools.ReadOnly,
		Confirm:     tools.ConfirmNever,
		Source:      tools.SourceBuiltin,
		Handler:     handleAskUser,
	}
}

// handleAskUser is never called by the engine: a round waits for the
// answer itself. It is here for callers that run handlers directly.
func handleAskUser(context.Context, tools.Request) (tools.Result, error) {
	return tools.Result{}, errors.New("runs only inside a round, where the engine waits for the human answer, which arrives as the `answer` signal; it cannot run as a plain handler")
}
