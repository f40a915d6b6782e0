package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func TestBuildFromEnv(t *testing.T) {
	t.Setenv(EnvBuildID, "")
	t.Setenv(EnvDeployment, "")
	id, dep, err := buildFromEnv()
	require.NoError(t, err)
	require.Equal(t, DefaultBuildID(), id, "the default is the binary's revision")
	require.Empty(t, dep)

	t.Setenv(EnvBuildID, "b-2")
	t.Setenv(EnvDeployment, "toolround")
	id, dep, err = buildFromEnv()
	require.NoError(t, err)
	require.Equal(t, "b-2", id)
	require.Equal(t, "toolround", dep)

	for _, bad := range []string{"a.b", "a/b", "a b", strings.Repeat("x", 201)} {
		t.Setenv(EnvBuildID, bad)
		_, _, err = buildFromEnv()
		require.ErrorContains(t, err, EnvBuildID, bad)
	}
	t.Setenv(EnvBuildID, "ok")
	t.Setenv(EnvDeployment, "toolround.v2")
	_, _, err = buildFromEnv()
	require.ErrorContains(t, err, EnvDeployment)
}

func TestDeploymentOptionsAreAutoUpgradeNeverPinned(t *testing.T) {
	require.Equal(t, worker.DeploymentOptions{}, Config{BuildID: "b1"}.deploymentOptions(), "no deployment: unversioned")
	o := Config{BuildID: "b1", Deployment: "toolround"}.deploymentOptions()
	require.True(t, o.UseVersioning)
	require.Equal(t, worker.WorkerDeploymentVersion{DeploymentName: "toolround", BuildID: "b1"}, o.Version)
	require.Equal(t, workflow.VersioningBehaviorAutoUpgrade, o.DefaultVersioningBehavior)
}

func TestBuildGaugeNamesTheBuild(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	require.NoError(t, observeBuild(tel.Meter, Config{BuildID: "b1", Deployment: "toolround", TaskQueue: "tq"}))
	require.Contains(t, scrape(t, tel), `toolround_worker_build_info{build_id="b1",deployment="toolround",task_queue="tq"} 1`+"\n")
}

func TestBuildGaugeOfAnUnversionedWorkerHasNoEmptyLabel(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	require.NoError(t, observeBuild(tel.Meter, Config{BuildID: "b1", TaskQueue: "tq"}))
	require.Contains(t, scrape(t, tel), `toolround_worker_build_info{build_id="b1",task_queue="tq"} 1`+"\n")
}
