// Command testtoolworker is a tool worker of the integration tests (Y1): it
// serves two tools on TOOL_QUEUE with toolworker, announcing them to the
// catalog on TOOLROUND_TASK_QUEUE, until SIGINT or SIGTERM.
//   - hold_refund (a side effect) appends its operation id to
//     MARKS/refund, then waits until its context ends: a test kills the
//     process while it waits, or cancels the round, which the function
//     sees (it then appends to MARKS/refund-cancelled);
//   - hold_lookup (read-only) appends a line to MARKS/lookup; the first
//     attempt then waits until its context ends, a later one answers
//     "found <id>";
//   - hold_transfer (a side effect) appends its operation id to
//     MARKS/transfer and waits like hold_refund; its reconcile says the
//     call took effect when that file holds its operation id;
//   - record_order (a side effect) POSTs its id to the url it is given,
//     under Idempotency-Key = its operation id, and answers with the
//     status (the crash matrix's tool-worker scenario, L1).
//
// Built with the tag crashpoints it stops at the crash points of its
// activities and of the calls that record them (internal/crashpoint).
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/toolworker"
)

func mark(dir, name, line string) (int, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		_ = f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(path)
	return strings.Count(string(b), "\n"), err
}

type orderArgs struct {
	ID string `json:"id"`
}

func main() {
	marks := os.Getenv("MARKS")
	refund := toolworker.New("hold_refund", func(ctx context.Context, call toolworker.Call, a orderArgs) (any, error) {
		if _, err := mark(marks, "refund", call.OperationID); err != nil {
			return nil, err
		}
		<-ctx.Done()
		_, _ = mark(marks, "refund-cancelled", call.OperationID)
		return nil, ctx.Err()
	}, toolworker.Timeouts(time.Minute, 10*time.Second, 3*time.Second))
	lookup := toolworker.New("hold_lookup", func(ctx context.Context, call toolworker.Call, a orderArgs) (any, error) {
		n, err := mark(marks, "lookup", a.ID)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return "found " + a.ID, nil
	}, toolworker.ReadOnly(), toolworker.Timeouts(time.Minute, time.Minute, 3*time.Second))

	transfer := toolworker.New("hold_transfer", func(ctx context.Context, call toolworker.Call, a orderArgs) (any, error) {
		if _, err := mark(marks, "transfer", call.OperationID); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}, toolworker.Timeouts(time.Minute, time.Minute, 3*time.Second),
		toolworker.Reconciles(func(_ context.Context, call toolworker.Call, _ orderArgs) (*bool, error) {
			b, err := os.ReadFile(filepath.Join(marks, "transfer"))
			if err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			took := strings.Contains(string(b), call.OperationID+"\n")
			return &took, nil
		}))

	record := toolworker.New("record_order", func(ctx context.Context, call toolworker.Call, a struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}) (any, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, strings.NewReader(a.ID))
		if err != nil {
			return nil, err
		}
		req.Header.Set(round.IdempotencyHeader, call.OperationID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		_ = resp.Body.Close()
		return fmt.Sprintf("recorded %s: %s", a.ID, resp.Status), nil
	}, toolworker.Timeouts(time.Minute, 10*time.Second, 3*time.Second))

	var opts toolworker.Options
	if ci := crashpoint.WorkerInterceptor(); ci != nil {
		opts.Worker.Interceptors = []interceptor.WorkerInterceptor{ci}
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"),
		ConnectionOptions: client.ConnectionOptions{DialOptions: crashpoint.DialOptions()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtoolworker:", err)
		os.Exit(1)
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Println("tool worker serving", os.Getenv("TOOL_QUEUE"))
	if err := toolworker.Serve(ctx, c, os.Getenv("TOOL_QUEUE"), []toolworker.Tool{refund, lookup, transfer, record}, opts); err != nil {
		fmt.Fprintln(os.Stderr, "testtoolworker:", err)
		os.Exit(2)
	}
}
