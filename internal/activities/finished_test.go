package activities

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

type eventSink struct {
	mu     sync.Mutex
	events []round.Event
}

func (s *eventSink) Publish(_ context.Context, _ string, events []round.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, events...)
	return nil
}

func (s *eventSink) finished() []round.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []round.Event
	for _, e := range s.events {
		if e.Type == round.EventCallFinished {
			out = append(out, e)
		}
	}
	return out
}

// TestExecuteToolPublishesCallFinished (U7): an attempt that gives the call
// its result (ok, the tool's own error, a tool the worker does not know)
// publishes call_finished with the call's id, status, a preview of the
// content as history gets it and the duration; an attempt that Temporal
// retries or that is cancelled publishes none (pass 3 does, when it is the
// last).
func TestExecuteToolPublishesCallFinished(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(
		tools.Definition{Name: "big", SideEffect: tools.ReadOnly, Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{Content: strings.Repeat("x", 500)}, nil
		}},
		tools.Definition{Name: "fails", SideEffect: tools.ReadOnly, Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{}, errors.New("no such file")
		}},
		tools.Definition{Name: "flaky", SideEffect: tools.ReadOnly, Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{}, tools.Transient(errors.New("503"))
		}},
		tools.Definition{Name: "stuck", SideEffect: tools.ReadOnly, Handler: func(ctx context.Context, _ tools.Request) (tools.Result, error) {
			<-ctx.Done()
			return tools.Result{}, ctx.Err()
		}},
	)
	sink := &eventSink{}
	a := &Activities{Registry: reg, Events: sink, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	run := func(callID, tool string) {
		_, _ = env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: callID, Tool: tool, SessionID: "s", RunID: "r", Round: 1, WorkflowID: "wf"})
	}
	run("b1", "big")
	run("f1", "fails")
	run("u1", "made_up")
	run("t1", "flaky")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	run("s1", "stuck")

	got := map[string]round.Event{}
	for _, e := range sink.finished() {
		require.NotContains(t, got, e.CallID, "one call_finished per call")
		got[e.CallID] = e
	}
	require.Len(t, got, 3, "none for the retried or cancelled attempt: %v", got)
	require.Equal(t, "wf/b1/finished", got["b1"].ID)
	require.Equal(t, round.StatusOK, got["b1"].Status)
	require.Equal(t, round.ResultPreview(strings.Repeat("x", 500)), got["b1"].Detail, "a short preview")
	require.Equal(t, round.StatusError, got["f1"].Status)
	require.Equal(t, "no such file", got["f1"].Detail)
	require.Equal(t, round.StatusError, got["u1"].Status)
	require.Equal(t, "big", got["b1"].Tool)
	require.Equal(t, 1, got["b1"].Round)
}
