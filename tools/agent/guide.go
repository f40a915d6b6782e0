package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

// guideTopics is the built-in guidance, by topic.
var guideTopics = map[string]string{
	"overview": `Working through a task:
1. Understand: restate the goal and what "done" means; ask_user only when a choice is truly the user's.
2. Plan: break the work into steps with write_todo; keep the list current as you go.
3. Act in small steps, one verifiable change at a time; prefer tools over guessing (calculate for arithmetic, read_files before editing).
4. Verify each step (run the tests, re-read the file, check the numbers) before building on it.
5. Recover from failures deliberately (topic: errors), and record what worked with write_error.
6. Finish with write_result: the answer, what changed, and anything left open.
Topics: ` + "%s" + `.`,

	"planning": `Planning:
- Write the steps with write_todo before starting anything that takes more than two or three tool calls.
- Each item should be checkable: "add retry to fetch in client.go", not "improve client".
- Order steps so that early ones reduce uncertainty (read, search, reproduce) before changes.
- Independent read-only calls (read_files, search_web, fetch_page, calculate) can go in one round: they run concurrently.
- Re-plan when facts change: rewrite the whole list, marking finished items done.`,

	"verification": `Verifying:
- After a change, check it the way a reviewer would: run the tests or the command, re-read the edited region.
- Check numbers with calculate, not by eye; check facts against a second source when they matter.
- Compare the result with the goal stated at the start, not with the last step.
- Say plainly what you could not verify.`,

	"errors": `Recovering from tool errors:
- Read the whole error: it usually names the cause and a next step.
- Look at error_history (tool=..., query=...) first: a resolution recorded earlier in this session may say what works.
- A missing or refused credential: ask the user for it, store it with store_secret, and send it as {{secret:NAME}}.
- Do not repeat the same call unchanged; change one thing (path, arguments, approach) at a time.
- When another way succeeds, record it: write_error(tool, error, outcome="resolved", resolution="what worked").
- When you cannot get past it, record outcome="unresolved" and tell the user what blocks you.`,

	"research": `Researching:
- Start broad (search_web), then read the best sources (fetch_page with a query saying what to keep).
- For structured data, find an API with public_api_list and call it with http_request.
- Keep track of where each fact came from; prefer primary sources and recent dates.
- Use chat_history to recall what was already found in this session instead of fetching it again.`,

	"tools": `Finding and calling tools:
- The turn context lists more tools by name; fetch a tool's schema with find_tools, then call it as run_tool(name, args).
- find_tools accepts words ("http request") or select:NAME for exactly one tool.
- A first call of a tool whose schema you have not fetched returns the schema: call it again with proper arguments.
- Arguments are checked against the schema; an invalid-arguments result lists every problem with its field.`,

	"finishing": `Finishing:
- Make sure every todo item is done or explicitly dropped (write_todo).
- Record the final answer with write_result: what was asked, what you did, the result, and open questions.
- Keep the answer self-contained: the user may read only that.`,
}

var guideAliases = map[string]string{
	"plan": "planning", "todo": "planning",
	"verify": "verification", "check": "verification", "testing": "verification",
	"error": "errors", "tool_errors": "errors", "recover": "errors", "recovery": "errors", "failure": "errors", "failures": "errors",
	"search":     "research",
	"find_tools": "tools", "run_tool": "tools",
	"finish": "finishing", "result": "finishing", "done": "finishing",
}

func guideTopicNames() []string {
	names := make([]string, 0, len(guideTopics))
	for n := range guideTopics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func reasoningGuide() tools.Definition {
	return tools.Definition{
		Name: "reasoning_guide",
		Description: "Short guidance on working through a problem: planning, verifying, recovering from tool errors, research, finding tools, finishing. " +
			"Call it without a topic for the overview.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"topic": {Description: "one of: " + strings.Join(guideTopicNames(), ", "), MaxLength: tools.Ptr(50), Type: "string"},
		})),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Confirm:    tools.ConfirmNever,
		Timeout:    5 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(handleReasoningGuide),
	}
}

type reasoningGuideArgs = struct {
	Topic string `json:"topic"`
}

func handleReasoningGuide(_ context.Context, req tools.Request, args reasoningGuideArgs) (tools.Result, error) {
	topic := strings.ToLower(strings.TrimSpace(args.Topic))
	topic = strings.ReplaceAll(topic, " ", "_")
	if topic == "" {
		topic = "overview"
	}
	if a, ok := guideAliases[topic]; ok {
		topic = a
	}
	text, ok := guideTopics[topic]
	if !ok {
		return tools.Result{}, fmt.Errorf("no topic %q; topics: %s", args.Topic, strings.Join(guideTopicNames(), ", "))
	}
	if topic == "overview" {
		text = fmt.Sprintf(text, strings.Join(guideTopicNames(), ", "))
	}
	return tools.Text(text), nil
}
