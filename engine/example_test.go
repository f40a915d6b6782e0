package engine_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"testing"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/tools"
)

// ExampleRunWorker runs a worker with the built-in tools and one of the
// application's own until it is interrupted. It is the README's engine
// snippet; it needs a Temporal server, so go test compiles it and does not
// run it.
func ExampleRunWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := runWorker(ctx, logger); err != nil {
		log.Fatal(err)
	}
}

func runWorker(ctx context.Context, logger *slog.Logger) error {
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		return err
	}
	orderStatus := tools.Definition{
		Name:        "order_status",
		Description: "Tells where each of the orders is.",
		Parameters:  tools.Schema(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"string"}}},"required":["orders"]}`),
		Concurrent:  true,
		SideEffect:  tools.ReadOnly,
		Handler:     orderStatusOf,
	}
	// the built-in tools plus the application's; runs until ctx is done
	return engine.RunWorker(ctx, cfg, logger, engine.WithTools(orderStatus))
}

// orderStatusOf is the order_status tool's handler: a plain function of
// the call's arguments.
func orderStatusOf(ctx context.Context, req tools.Request) (tools.Result, error) {
	var args struct {
		Orders []string `json:"orders"`
	}
	if err := req.Decode(&args); err != nil {
		return tools.Result{}, err
	}
	answers := make([]string, len(args.Orders))
	for i, order := range args.Orders {
		answers[i] = fmt.Sprintf("%d. %s: shipped", i+1, order)
	}
	return tools.Text(strings.Join(answers, "\n")), nil
}

// TestREADMEEngineSnippetIsTheExample: the README's engine snippet is the
// code of ExampleRunWorker's worker, line for line, so go test compiles what
// the README shows.
func TestREADMEEngineSnippetIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "its own tools through `engine`"
	_, after, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("the README does not say %q", marker)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatalf("the README has no Go block after %q", marker)
	}
	block, _, _ = strings.Cut(block, "```")
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want, have := codeLines(block), codeLines(string(src))
	if len(want) == 0 {
		t.Fatal("the README's engine block is empty")
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if strings.Join(have[i:i+len(want)], "\n") == strings.Join(want, "\n") {
			return
		}
	}
	t.Fatalf("the README's engine block is not in example_test.go as shown:\n%s", strings.Join(want, "\n"))
}

// codeLines is s's lines without their indentation and without blank lines.
func codeLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
