package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/testenv"
)

// helmBin is HELM (scripts/test.sh sets it), else the helm that
// scripts/test.sh builds into .tools/bin.
func helmBin(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	h, _ := filepath.Abs("../.tools/bin/helm")
	if _, err := os.Stat(h); err == nil {
		return h
	}
	testenv.Unavailable(t, "helm (set HELM or run `make test`, which builds it)")
	return ""
}

// hookScript renders the chart's post-upgrade hook (O4) with these --set
// flags and returns the shell script its Job runs.
func hookScript(t *testing.T, set ...string) string {
	t.Helper()
	args := []string{"template", "tr", "../deploy/helm/toolround", "--show-only", "templates/versioning-hook.yaml",
		"--set", "secrets.existingSecret=keys", "--set", "redis.url=redis://redis:6379/0"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(helmBin(t), args...).CombinedOutput()
	require.NoError(t, err, "helm template: %s", out)
	// The script is the block scalar after "- |" in args, indented 14
	// spaces, up to the container's env.
	var script []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.TrimSpace(line) == "- |":
			in = true
		case in && strings.HasPrefix(line, "          env:"):
			in = false
		case in:
			script = append(script, strings.TrimPrefix(line, strings.Repeat(" ", 14)))
		}
	}
	require.NotEmpty(t, script, "no script in the hook:\n%s", out)
	return strings.Join(script, "\n")
}

// TestHelmHookMakesTheNewBuildCurrentV1 runs the chart's post-upgrade hook
// script, as its Job would, with the real Temporal CLI against the dev
// server: started before build B's workers poll, it waits for them and
// then makes B the deployment's current version; rendered with
// versioning.ramp=30 for build C, it makes C the ramping version at 30%.
func TestHelmHookMakesTheNewBuildCurrentV1(t *testing.T) {
	cli := temporalCLI(t)
	deployment := "hook-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e := newEnv(t, "WORKER_DEPLOYMENT="+deployment)
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := tc.WorkerDeploymentClient().GetHandle(deployment)

	runHook := func(build string, set ...string) <-chan error {
		script := hookScript(t, append(set, "image.tag="+build, "versioning.deployment="+deployment)...)
		cmd := exec.CommandContext(ctx, "sh", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"),
			"TEMPORAL_ADDRESS="+temporalAddress(), "TEMPORAL_NAMESPACE=default",
			"DEPLOYMENT="+deployment, "BUILD_ID="+build)
		logs := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			if err != nil {
				t.Logf("hook output:\n%s", logs.String())
			}
			done <- err
		}()
		return done
	}

	a := e.startWorkerBin(workerBin, "WORKER_BUILD_ID=build-a")
	require.Eventually(t, func() bool { return strings.Contains(a.logs.String(), "this build is now current") }, 30*time.Second, 50*time.Millisecond)

	hook := runHook("build-b")
	select {
	case err := <-hook:
		t.Fatalf("the hook ended (%v) before build B's workers polled", err)
	case <-time.After(2 * time.Second):
	}
	e.startWorkerBin(workerBin, "WORKER_BUILD_ID=build-b")
	require.NoError(t, <-hook, "the hook makes build B current once it polls")
	d, err := h.Describe(ctx, tclient.WorkerDeploymentDescribeOptions{})
	require.NoError(t, err)
	require.NotNil(t, d.Info.RoutingConfig.CurrentVersion)
	require.Equal(t, "build-b", d.Info.RoutingConfig.CurrentVersion.BuildID)

	e.startWorkerBin(workerBin, "WORKER_BUILD_ID=build-c")
	require.NoError(t, <-runHook("build-c", "versioning.ramp=30"))
	d, err = h.Describe(ctx, tclient.WorkerDeploymentDescribeOptions{})
	require.NoError(t, err)
	require.Equal(t, "build-b", d.Info.RoutingConfig.CurrentVersion.BuildID, "a ramp leaves the current version")
	require.NotNil(t, d.Info.RoutingConfig.RampingVersion)
	require.Equal(t, "build-c", d.Info.RoutingConfig.RampingVersion.BuildID)
	require.InDelta(t, 30, d.Info.RoutingConfig.RampingVersionPercentage, 0.01)
}
