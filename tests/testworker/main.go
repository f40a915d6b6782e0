// Command testworker is the worker of the integration tests: the engine of
// bin/worker, configured the same way, plus what only tests need:
//   - tools that return a given number of bytes (emit_bytes runs as a local
//     activity, emit_bytes_remote as a regular one), for large results;
//   - with TESTWORKER_HOLD_COMMIT=DIR, the publication at the end of pass 3
//     (the PublishRound call that carries the round's history) stops and
//     writes DIR/commit, so that a crash test can kill the process in exactly
//     that step; TESTWORKER_HOLD_WHEN=after lets the publication take effect
//     first, so the kill lands after its writes and before the workflow task
//     that follows it is recorded;
//   - with TOOLROUND_CRASH_AT=<tool>:<point> (edit_file:before_write,
//     remove_file:after_write, ...), the process kills itself with SIGKILL
//     when a call reaches that checkpoint inside the tool (tools.Checkpoint,
//     internal/seam):
//     the crash tests' way to lose an attempt at a chosen point; with
//     TOOLROUND_CRASH_WAIT=FILE as well, it first waits (at most a minute)
//     until FILE exists, so that a command started before the checkpoint
//     has made its effect when the worker dies.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/seam"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testworker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, logger, err := engine.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, after := os.Getenv("TESTWORKER_HOLD_COMMIT"), os.Getenv("TESTWORKER_HOLD_WHEN") == "after"
	ctx = seam.WithActivity(ctx, wire.ActivityPublishRound, func(publish func(context.Context, wire.PublishInput) error) func(context.Context, wire.PublishInput) error {
		return holdCommit(publish, dir, after)
	})
	ctx = seam.WithActivity(ctx, wire.ActivityExecuteTool, func(execute func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error)) func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error) {
		return crashAt(execute, os.Getenv("TOOLROUND_CRASH_AT"), os.Getenv("TOOLROUND_CRASH_WAIT"))
	})
	return engine.RunWorker(ctx, cfg, logger,
		engine.WithTools(emitTools(cfg)...),
		engine.WithLogAttrs("hold_commit", dir != ""))
}

// holdCommit is PublishRound with the TESTWORKER_HOLD_COMMIT hook: with dir
// set, the publication that carries the round's history writes dir/commit
// and waits to be killed (after it took effect when after is true).
func holdCommit(publish func(context.Context, wire.PublishInput) error, dir string, after bool) func(context.Context, wire.PublishInput) error {
	return func(ctx context.Context, in wire.PublishInput) error {
		if dir == "" || len(in.History) == 0 {
			return publish(ctx, in)
		}
		if after {
			if err := publish(ctx, in); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "commit"), []byte(in.WorkflowID), 0o644); err != nil {
			return err
		}
		<-ctx.Done() // the test kills the process here
		return ctx.Err()
	}
}

var emitSchema = tools.Schema(`{
  "type": "object",
  "properties": {
    "bytes": {"type": "integer", "minimum": 0, "maximum": 67108864, "description": "How many bytes to return."},
    "fill": {"type": "string", "minLength": 1, "description": "Text repeated to fill the result; default \"x\"."}
  },
  "required": ["bytes"],
  "additionalProperties": false
}`)

// Emit is the content that emit_bytes returns: fill repeated, cut to n bytes.
func emit(n int, fill string) string {
	if fill == "" {
		fill = "x"
	}
	return strings.Repeat(fill, n/len(fill)+1)[:n]
}

// emitTools are emit_bytes, which runs as a local activity (a read-only
// tool with a short timeout), and emit_bytes_remote, which runs as a regular
// activity (its timeout is above LOCAL_ACTIVITY_MAX).
func emitTools(cfg engine.Config) []tools.Definition {
	handler := tools.Typed(func(_ context.Context, req tools.Request, a struct {
		Bytes int    `json:"bytes"`
		Fill  string `json:"fill"`
	}) (tools.Result, error) {
		return tools.Text(emit(a.Bytes, a.Fill)), nil
	})
	local := tools.Definition{
		Name:        "emit_bytes",
		Description: "Return the given number of bytes of fill text (tests of large results).",
		Parameters:  emitSchema,
		Concurrent:  true,
		SideEffect:  tools.ReadOnly,
		Timeout:     10 * time.Second,
		Handler:     handler,
	}
	remote := local
	remote.Name = "emit_bytes_remote"
	remote.Timeout = max(2*time.Minute, cfg.LocalActivityMax+time.Minute)
	return []tools.Definition{local, remote}
}

// crashAt is ExecuteTool with the TOOLROUND_CRASH_AT hook: the process
// dies at the named checkpoint, as a worker does when its host fails; with
// waitFor set, once that file exists.
func crashAt(execute func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error), point, waitFor string) func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error) {
	return func(ctx context.Context, in wire.ExecuteInput) (wire.ExecuteOutput, error) {
		if point != "" {
			ctx = seam.WithCheckpoint(ctx, func(p string) {
				if p == point {
					if waitFor != "" && !waitForFile(waitFor, time.Minute) {
						fmt.Fprintln(os.Stderr, "testworker:", waitFor, "did not appear; crashing anyway")
					}
					fmt.Fprintln(os.Stderr, "testworker: crashing at", p)
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {} // the signal is on its way
				}
			})
		}
		return execute(ctx, in)
	}
}

// waitForFile reports whether path exists within limit.
func waitForFile(path string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
