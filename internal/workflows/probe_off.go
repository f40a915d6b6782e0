//go:build !upgradeprobe

package workflows

import "go.temporal.io/sdk/workflow"

// probeUpgrade is nothing in a worker built without the tag upgradeprobe
// (probe_on.go).
func probeUpgrade(workflow.Context) {}
