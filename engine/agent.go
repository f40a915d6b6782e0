package engine

import (
	"log/slog"
	"os"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets"
)

// registerAgent registers the agent run (AgentRun) and its model call
// (ModelCall). The model comes from LLM_BASE_URL, LLM_MODEL, LLM_API_KEY and
// LLM_TIMEOUT; without LLM_BASE_URL every model call fails with a message
// that says so, and rounds run as before.
func registerAgent(r worker.Registry, wf *workflows.RoundWorkflow, acts *activities.Activities) {
	aw := &agentrun.Workflow{}
	contextTokens := 0
	if rc, ok := wf.Catalog.(*workflows.RegistryCatalog); ok {
		aw.HeartbeatTimeout, aw.Limits = rc.Options.HeartbeatTimeout, rc.Options.WorkerLimits
		contextTokens = rc.Options.ContextTokens
	}
	r.RegisterWorkflowWithOptions(aw.Run, workflow.RegisterOptions{Name: names.AgentWorkflowName})
	m := &activities.Model{Registry: acts.Registry, Events: acts.Events, Blobs: acts.Blobs, Logger: acts.Logger,
		SecretKey: sync.OnceValues(secrets.ConfigFromEnv().LoadKey), ContextTokens: contextTokens, MaxRaw: acts.LargeResult}
	if acts.Secrets != nil {
		m.Secrets = acts.Secrets // a thought that holds an earlier turn's stored value is sealed (F2)
	}
	logger := acts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg, err := llm.ConfigFromEnv(os.Getenv); err != nil {
		logger.Warn("the agent run's model is not usable", "error", err)
	} else if cfg.BaseURL != "" {
		if m.LLM, err = llm.New(cfg, llm.EnvModel); err != nil {
			logger.Warn("the agent run's model is not usable", "error", err)
		}
	}
	r.RegisterActivityWithOptions(m.Call, activity.RegisterOptions{Name: wire.ActivityModelCall})
}
