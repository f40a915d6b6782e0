package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/tools"
)

// Environment variables of a worker's build and deployment (V1).
const (
	EnvBuildID    = "WORKER_BUILD_ID"
	EnvDeployment = "WORKER_DEPLOYMENT"
)

// buildIDPattern is what a build id and a deployment name may be: what
// Temporal accepts in a deployment version ("name.build"), without the dot
// that separates the two.
var buildIDPattern = regexp.MustCompile(`^[A-Za-z0-9_+\-]{1,200}$`)

// buildFromEnv reads WORKER_BUILD_ID (default: DefaultBuildID) and
// WORKER_DEPLOYMENT.
func buildFromEnv() (buildID, deployment string, err error) {
	buildID = envconf.Get(EnvBuildID, "")
	if buildID == "" {
		buildID = DefaultBuildID()
	}
	if !buildIDPattern.MatchString(buildID) {
		return "", "", fmt.Errorf("%s=%q: want 1 to 200 letters, digits, '-', '_' or '+'", EnvBuildID, buildID)
	}
	deployment = envconf.Get(EnvDeployment, "")
	if deployment != "" && !buildIDPattern.MatchString(deployment) {
		return "", "", fmt.Errorf("%s=%q: want 1 to 200 letters, digits, '-', '_' or '+'", EnvDeployment, deployment)
	}
	return buildID, deployment, nil
}

// DefaultBuildID is the binary's VCS revision (its first 12 hex digits,
// "+dirty" when the tree had changes), or "dev" for a binary built without
// one (go run, -buildvcs=false).
func DefaultBuildID() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// deploymentOptions are the worker's Worker Versioning options: with a
// deployment, a version of it whose workflows are AutoUpgrade, never pinned
// (V1): a round or agent run moves to the current version at its next
// workflow task, and every change of workflow code is behind a version.
func (c Config) deploymentOptions() worker.DeploymentOptions {
	if c.Deployment == "" {
		return worker.DeploymentOptions{}
	}
	return worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   worker.WorkerDeploymentVersion{DeploymentName: c.Deployment, BuildID: c.BuildID},
		DefaultVersioningBehavior: workflow.VersioningBehaviorAutoUpgrade,
	}
}

// becomeCurrentIfNone makes this worker's version the deployment's current
// one when the deployment has none yet (its first worker), so that a
// deployment's first start needs no step by hand; a deployment with a
// current version is left as it is: rolling out a new build is the
// operator's set-current-version (docs/operations.md). The version exists
// only once the server has seen it poll, so this retries for up to wait.
func becomeCurrentIfNone(ctx context.Context, c client.Client, cfg Config, logger *slog.Logger, wait time.Duration) error {
	if cfg.Deployment == "" {
		return nil
	}
	h := c.WorkerDeploymentClient().GetHandle(cfg.Deployment)
	deadline := time.Now().Add(wait)
	for {
		err := func() error {
			d, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
			if err == nil && d.Info.RoutingConfig.CurrentVersion != nil {
				if cur := d.Info.RoutingConfig.CurrentVersion.BuildID; cur != cfg.BuildID {
					logger.Info("worker deployment has a current version: this build takes new work once it is made current",
						"deployment", cfg.Deployment, "current_build_id", cur, "build_id", cfg.BuildID)
				}
				return nil
			}
			var nf *serviceerror.NotFound
			if err != nil && !errors.As(err, &nf) {
				return err
			}
			if _, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: cfg.BuildID}); err != nil {
				return err
			}
			logger.Info("worker deployment had no current version: this build is now current", "deployment", cfg.Deployment, "build_id", cfg.BuildID)
			return nil
		}()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("worker deployment %s: make build %s current: %w", cfg.Deployment, cfg.BuildID, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// observeBuild registers toolround_worker_build_info, 1 labelled with the
// worker's build id, deployment and task queue (V1): a dashboard sees
// which builds poll while one rolls out.
func observeBuild(m metric.Meter, cfg Config) error {
	g, err := m.Int64ObservableGauge("toolround_worker_build_info",
		metric.WithDescription("1 for each running worker, labelled with its WORKER_BUILD_ID, WORKER_DEPLOYMENT (no label: unversioned) and task queue."))
	if err != nil {
		return err
	}
	kv := []attribute.KeyValue{attribute.String("build_id", cfg.BuildID), attribute.String("task_queue", cfg.TaskQueue)}
	if cfg.Deployment != "" {
		// An unversioned worker has no deployment: the series goes without
		// the label rather than carry an empty one.
		kv = append(kv, attribute.String("deployment", cfg.Deployment))
	}
	attrs := metric.WithAttributes(kv...)
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(g, 1, attrs)
		return nil
	}, g)
	return err
}

// observeToolQueues reports, for each queue of TOOL_QUEUES, whether a tool
// worker polled it within TOOL_WORKER_TTL and how many tools it announced
// (Y2).
func observeToolQueues(m metric.Meter, states func() []tools.QueueState) error {
	up, err := m.Int64ObservableGauge("toolround_tool_queue_available",
		metric.WithDescription("1 for each queue of TOOL_QUEUES a tool worker polled within TOOL_WORKER_TTL, else 0, by queue."))
	if err != nil {
		return err
	}
	n, err := m.Int64ObservableGauge("toolround_tool_queue_tools",
		metric.WithDescription("The tools each queue of TOOL_QUEUES announced and this worker runs, by queue."))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, st := range states() {
			attrs := metric.WithAttributes(attribute.String("queue", st.Queue))
			v := int64(0)
			if st.Available {
				v = 1
			}
			o.ObserveInt64(up, v, attrs)
			o.ObserveInt64(n, int64(len(st.Tools)-len(st.Refused)), attrs)
		}
		return nil
	}, up, n)
	return err
}
