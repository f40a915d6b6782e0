//go:build upgradeprobe

package workflows

import "go.temporal.io/sdk/workflow"

// probeUpgrade is the workflow change of the rolling-upgrade test's new
// build (tests/upgrade_test.go, V1): a version marker in pass 3, asked as
// every change is, so that rounds started on the old build finish on this
// one without a nondeterminism error, and the marker shows which rounds the
// new code ran.
func probeUpgrade(ctx workflow.Context) {
	_ = Version(ctx, changeUpgradeProbe, 1)
}
