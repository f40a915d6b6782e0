package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/testenv"
)

// inFlight counts the peer calls running at once.
type inFlight struct {
	mu       sync.Mutex
	now, max int
	release  chan struct{}
}

func (f *inFlight) tool(ctx context.Context, args string) (string, error) {
	f.mu.Lock()
	f.now++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
	<-f.release
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
	return "ok " + args, nil
}

func runPeer(t *testing.T, in PeerInput, tool func(context.Context, string) (string, error)) ([]string, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(testenv.QuietLogger())
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(peerWorkflow)
	env.RegisterActivityWithOptions(tool, activity.RegisterOptions{Name: PeerActivityName})
	env.ExecuteWorkflow(peerWorkflow, in)
	require.True(t, env.IsWorkflowCompleted())
	if err := env.GetWorkflowError(); err != nil {
		return nil, err
	}
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	return out, nil
}

func TestPeerRunsEveryCallAndReturnsTheOutputsInOrder(t *testing.T) {
	for _, in := range []PeerInput{{Calls: 10}, {Calls: 10, Bound: 3}, {Calls: 10, Local: true}} {
		out, err := runPeer(t, in, func(_ context.Context, args string) (string, error) { return "ok " + args, nil })
		require.NoError(t, err)
		require.Len(t, out, 10)
		for i, o := range out {
			require.Equal(t, fmt.Sprintf(`ok {"n":%d}`, i), o, "%+v", in)
		}
	}
}

func TestBoundedPeerKeepsAtMostItsBoundInFlight(t *testing.T) {
	for _, c := range []struct {
		in   PeerInput
		want int
	}{{PeerInput{Calls: 10, Bound: 3}, 3}, {PeerInput{Calls: 10}, 10}} {
		f := &inFlight{release: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			defer close(done)
			// Release the calls one at a time, each time only once as many
			// as may run have started: min(bound, calls not yet released).
			for k := range c.in.Calls {
				ok := assert.Eventually(t, func() bool {
					f.mu.Lock()
					defer f.mu.Unlock()
					return f.now == min(c.want, c.in.Calls-k)
				}, 10*time.Second, 5*time.Millisecond, "release %d of %+v", k, c.in)
				if !ok {
					close(f.release)
					return
				}
				f.release <- struct{}{}
			}
		}()
		_, err := runPeer(t, c.in, f.tool)
		<-done
		require.NoError(t, err)
		require.Equal(t, c.want, f.max, "%+v", c.in)
	}
}

func TestPeerRefusesNegativeInput(t *testing.T) {
	_, err := runPeer(t, PeerInput{Calls: -1}, peerTool)
	require.ErrorContains(t, err, "must not be negative")
}
