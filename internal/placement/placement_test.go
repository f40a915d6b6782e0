package placement

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

type updateResult struct {
	b   Binding
	err error
}

func (u *updateResult) callbacks() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept:   func() {},
		OnReject:   func(err error) { u.err = err },
		OnComplete: func(v any, err error) { u.err = err; u.b, _ = v.(Binding) },
	}
}

// TestBindingWorkflow: the first bind wins and every later one answers its
// host; a move to a host with no poller is refused with host_unavailable
// and changes nothing; a move to a live host rebinds and bumps the
// generation; release lets it go (bumping it again), and the next bind
// takes the new host. After MaxUpdates updates it continues as new with
// its binding.
func TestBindingWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(func(_ context.Context, in HostAliveInput) (HostAliveOutput, error) {
		return HostAliveOutput{Alive: in.Host == "b"}, nil
	}, activity.RegisterOptions{Name: ActivityHostAlive})
	steps := []struct {
		name, host string
		want       Binding
		fails      string
	}{
		{UpdateBind, "a", Binding{"a", 1}, ""},
		{UpdateBind, "b", Binding{"a", 1}, ""},
		{UpdateMove, "c", Binding{}, "host_unavailable"},
		{UpdateBind, "c", Binding{"a", 1}, ""},
		{UpdateMove, "b", Binding{"b", 2}, ""},
		{UpdateMove, "b", Binding{"b", 2}, ""},
		{UpdateBind, "../x", Binding{}, "HOST_ID"},
		{UpdateRelease, "a", Binding{"b", 2}, ""}, // bound to b, not a
		{UpdateRelease, "", Binding{"", 3}, ""},
		{UpdateBind, "c", Binding{"c", 4}, ""},
	}
	results := make([]updateResult, len(steps))
	for i, st := range steps {
		env.RegisterDelayedCallback(func() {
			var arg any = MoveInput{Host: st.host}
			if st.name == UpdateRelease {
				arg = ReleaseInput{Host: st.host}
			}
			env.UpdateWorkflow(st.name, "", results[i].callbacks(), arg)
		}, time.Duration(i+1)*time.Second)
	}
	env.RegisterDelayedCallback(func() {
		for range MaxUpdates {
			env.UpdateWorkflow(UpdateBind, "", (&updateResult{}).callbacks(), MoveInput{Host: "z"})
		}
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, State{Session: "s", TaskQueue: "q"})
	for i, st := range steps {
		if st.fails != "" {
			require.ErrorContains(t, results[i].err, st.fails, "step %d", i)
			continue
		}
		require.NoError(t, results[i].err, "step %d", i)
		require.Equal(t, st.want, results[i].b, "step %d %s %s", i, st.name, st.host)
	}
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.ErrorContains(t, err, "continue as new")
}

func TestConfigValues(t *testing.T) {
	for _, ok := range []string{"h-1a2b", "host.example", "A_1"} {
		require.NoError(t, CheckHostID(ok))
	}
	for _, bad := range []string{"", "-a", "a/b", "a@b", string(make([]byte, 65))} {
		require.Error(t, CheckHostID(bad), bad)
	}
	p, err := ParsePlacement("")
	require.NoError(t, err)
	require.Equal(t, Shared, p)
	p, err = ParsePlacement("host")
	require.NoError(t, err)
	require.Equal(t, Host, p)
	_, err = ParsePlacement("hosts")
	require.ErrorContains(t, err, "want shared or host")
	require.Equal(t, "tq@h", HostQueue("tq", "h"))
	require.Equal(t, 2500*time.Millisecond, PresencePoll(3*time.Second))
	require.Equal(t, 20*time.Second, PresencePoll(time.Minute))
	require.Equal(t, 5*time.Second, PresencePoll(10*time.Second))
}
