package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

// TodoItem is one entry of a session's todo list.
type TodoItem struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
}

const maxTodoText = 1000

func (t *toolset) writeTodo() tools.Definition {
	return tools.Definition{
		Name: "write_todo",
		Description: "Replace this session's todo list with the given items and show it as a checklist. " +
			"Write the whole list every time (it is replaced, not merged); mark finished items done. " +
			"Use it to plan multi-step work and keep track of progress. An empty list clears it.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"items": {
				Description: "the complete list, in order",
				Items: tools.Object(map[string]*tools.JSONSchema{
					"done": {Description: "true when finished", Type: "boolean"},
					"text": {Description: "what to do", MaxLength: tools.Ptr(maxTodoText), MinLength: tools.Ptr(1), Type: "string"},
				}, "text", "done"),
				MaxItems: tools.Ptr(t.cfg.MaxTodoItems),
				Type:     "array",
			},
		}, "items")),
		Concurrent: true,
		SideEffect: tools.Idempotent,
		Confirm:    tools.ConfirmNever,
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(t.handleWriteTodo),
	}
}

type writeTodoArgs = struct {
	Items []TodoItem `json:"items"`
}

func (t *toolset) handleWriteTodo(ctx context.Context, req tools.Request, args writeTodoArgs) (tools.Result, error) {
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	if len(args.Items) > t.cfg.MaxTodoItems {
		return tools.Result{}, fmt.Errorf("%d items, more than the limit of %d; group small steps together", len(args.Items), t.cfg.MaxTodoItems)
	}
	items := make([]TodoItem, 0, len(args.Items))
	for i, it := range args.Items {
		text := strings.Join(strings.Fields(it.Text), " ")
		if text == "" {
			return tools.Result{}, fmt.Errorf("item %d has no text", i+1)
		}
		items = append(items, TodoItem{Text: truncate(text, maxTodoText), Done: it.Done})
	}
	b, err := json.Marshal(items)
	if err != nil {
		return tools.Result{}, fmt.Errorf("encode list: %w", err)
	}
	tools.Checkpoint(ctx, "write_todo:before_write")
	if err := t.st.SetString(ctx, todoKey(req.SessionID), string(b), t.cfg.TTL); err != nil {
		return tools.Result{}, storeError("save list", err)
	}
	tools.Checkpoint(ctx, "write_todo:after_write")
	return tools.Text(renderTodo(items)), nil
}

func renderTodo(items []TodoItem) string {
	if len(items) == 0 {
		return "todo list cleared"
	}
	done := 0
	var b strings.Builder
	for _, it := range items {
		mark := " "
		if it.Done {
			mark = "x"
			done++
		}
		fmt.Fprintf(&b, "- [%s] %s\n", mark, it.Text)
	}
	return fmt.Sprintf("todo list (%d/%d done):\n%s", done, len(items), strings.TrimSuffix(b.String(), "\n"))
}
