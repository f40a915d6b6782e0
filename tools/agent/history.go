package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

const defaultHistoryLimit = 20

func (t *toolset) chatHistory() tools.Definition {
	return tools.Definition{
		Name: "chat_history",
		Description: "Read this session's earlier messages (user, assistant and tool results), newest last. " +
			"Filter with query (a phrase, or words that must all appear) and run_id; limit says how many to return. " +
			"Use it to recall what was said or found earlier instead of asking again.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"limit":  {Description: fmt.Sprintf("how many matching messages to return, newest last (default %d)", defaultHistoryLimit), Maximum: tools.Ptr(float64(t.cfg.HistoryMaxLimit)), Minimum: tools.Ptr(1.0), Type: "integer"},
			"query":  {Description: "text to look for; a message matches when it contains the phrase or all of its words (case-insensitive)", MaxLength: tools.Ptr(500), Type: "string"},
			"run_id": {Description: "only messages of this run", MaxLength: tools.Ptr(200), Type: "string"},
		})),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		NoDedupe:   true, // the history grows while the arguments stay the same
		Timeout:    15 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(t.handleChatHistory),
	}
}

type chatHistoryArgs = struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
	RunID string `json:"run_id"`
}

func (t *toolset) handleChatHistory(ctx context.Context, req tools.Request, args chatHistoryArgs) (tools.Result, error) {
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	if !t.shared {
		return tools.Result{}, errors.New("this worker runs without Redis, where the engine keeps the session history; set REDIS_URL for the worker")
	}
	limit := args.Limit
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	limit = min(limit, t.cfg.HistoryMaxLimit)
	raw, err := t.st.List(ctx, tools.HistoryKey(req.SessionID), t.cfg.HistoryScan)
	if err != nil {
		return tools.Result{}, storeError("read history", err)
	}
	match := newMatcher(args.Query)
	var hits []tools.HistoryRecord
	skipped := 0
	for _, item := range raw {
		var rec tools.HistoryRecord
		if err := json.Unmarshal([]byte(item), &rec); err != nil {
			skipped++
			continue
		}
		if args.RunID != "" && rec.RunID != args.RunID {
			continue
		}
		if !match(historyText(rec)) {
			continue
		}
		hits = append(hits, rec)
	}
	total := len(hits)
	if len(hits) > limit {
		hits = hits[len(hits)-limit:]
	}
	var b strings.Builder
	switch {
	case total == 0 && len(raw) == 0:
		b.WriteString("no messages in this session's history yet")
	case total == 0:
		fmt.Fprintf(&b, "no message matches (searched the newest %d messages)", len(raw))
	case total > len(hits):
		fmt.Fprintf(&b, "%d matching messages; the newest %d, oldest first:", total, len(hits))
	default:
		fmt.Fprintf(&b, "%d matching messages, oldest first:", total)
	}
	for _, rec := range hits {
		b.WriteString("\n\n")
		b.WriteString(t.renderHistory(rec))
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "\n\n(%d stored entries were not readable and were skipped)", skipped)
	}
	return tools.Text(b.String()), nil
}

func (t *toolset) renderHistory(rec tools.HistoryRecord) string {
	var head strings.Builder
	fmt.Fprintf(&head, "[run %s round %d", orDash(rec.RunID), rec.Round)
	if !rec.Time.IsZero() {
		fmt.Fprintf(&head, " %s", rec.Time.UTC().Format(time.RFC3339))
	}
	head.WriteString("] ")
	head.WriteString(orDash(rec.Role))
	if rec.ToolCallID != "" {
		fmt.Fprintf(&head, " (call %s)", rec.ToolCallID)
	}
	if names := toolCallNames(rec.ToolCalls); len(names) > 0 {
		fmt.Fprintf(&head, " called %s", strings.Join(names, ", "))
	}
	content := strings.TrimSpace(rec.Content)
	if content == "" {
		return head.String()
	}
	return head.String() + ":\n" + truncate(content, t.cfg.HistoryMessageChars)
}

// historyText is what a query is matched against: the content and the
// names of the tools an assistant message called.
func historyText(rec tools.HistoryRecord) string {
	names := toolCallNames(rec.ToolCalls)
	if len(names) == 0 {
		return rec.Content
	}
	return rec.Content + "\n" + strings.Join(names, " ")
}

func toolCallNames(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var calls []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	var names []string
	for _, c := range calls {
		if n := c.Function.Name; n != "" {
			names = append(names, n)
		} else if c.Name != "" {
			names = append(names, c.Name)
		}
	}
	return names
}

// newMatcher matches a text that contains the query as a phrase, or every
// word of it, ignoring case. An empty query matches everything.
func newMatcher(query string) func(string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return func(string) bool { return true }
	}
	words := strings.Fields(q)
	return func(text string) bool {
		lower := strings.ToLower(text)
		if strings.Contains(lower, q) {
			return true
		}
		for _, w := range words {
			if !strings.Contains(lower, w) {
				return false
			}
		}
		return true
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
