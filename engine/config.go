// Package engine is the one start-up path of a worker: configuration from the
// environment, the tool registry with the built-in tools, Redis, and the round
// workflow and its activities registered under their names (RegisterAll,
// StartWorker, RunWorker). Applications use it to run a worker with their own
// tools.
package engine

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/usertools"
	"github.com/toolround/toolround/internal/workspace"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/decision"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/files"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/web"
)

// Config is the worker's configuration. ConfigFromEnv reads it; each field
// names its environment variable and default.
type Config struct {
	// TemporalAddress is TEMPORAL_ADDRESS. Default "127.0.0.1:7233".
	TemporalAddress string
	// Namespace is TEMPORAL_NAMESPACE. Default "default".
	Namespace string
	// TaskQueue is TASK_QUEUE. Default "toolround".
	TaskQueue string
	// RedisURL is REDIS_URL. Default "redis://127.0.0.1:6379/0". Empty after
	// ConfigFromEnv only if REDIS_URL is set to "none": the worker then keeps
	// its cache in process.
	RedisURL string
	// Workdir is TOOLS_WORKDIR, the one folder the file and command tools may
	// touch. Default "./workdir".
	Workdir string
	// Workspace is WORKSPACE (W1): shared, every session's file and command
	// tools act in Workdir, or session, each session in its own folder
	// Workdir/sessions/<session_id>/, which needs the bubblewrap sandbox
	// (W2). Default shared.
	Workspace string
	// WorkspaceMaxBytes is WORKSPACE_MAX_BYTES (W3): the most a workspace
	// (each session's in session mode, TOOLS_WORKDIR in shared mode) may
	// hold, versions and background output included; a bare number of
	// bytes or one with K, M or G (powers of 1024). Default none.
	WorkspaceMaxBytes int64
	// WorkspaceTTL is WORKSPACE_TTL (W3): in session mode, a workspace idle
	// this long is removed, never one in use. Default none (kept).
	WorkspaceTTL time.Duration
	// Placement is WORKSPACE_PLACEMENT (W4): shared, every worker sees
	// every workspace (one folder or shared storage), or host, each
	// session's workspace is bound to one host and its workspace calls run
	// on that host's queue, <TASK_QUEUE>@<HOST_ID>. Default shared.
	Placement string
	// HostID is HOST_ID, this worker's host under placement=host. Default:
	// the id kept in TOOLS_WORKDIR/.toolround/host-id, made on first
	// start, so it follows the disk.
	HostID string
	// HostTimeout is WORKSPACE_HOST_TIMEOUT (W5): a host with no poller
	// seen this long is gone, and calls bound to it that never started
	// end workspace_unavailable. Default 60s; at least 3s.
	HostTimeout time.Duration
	// ToolQueues is TOOL_QUEUES (Y2): the task queues of tool workers
	// whose tools this worker runs, "q1:trusted,q2"; a trusted queue's
	// read-only tools skip approval. Default none.
	ToolQueues []usertools.Queue
	// ToolWorkerTTL is TOOL_WORKER_TTL (Y2): a tool queue none of whose
	// workers polled within it is listed unavailable. Default 2m.
	ToolWorkerTTL time.Duration
	// MaxConcurrent is MAX_CONCURRENT_TOOLS. Default max(3, cores/2).
	MaxConcurrent int
	// ConfirmTimeout is CONFIRM_TIMEOUT. Default 30m.
	ConfirmTimeout time.Duration
	// HeartbeatTimeout is HEARTBEAT_TIMEOUT: how soon a lost worker is noticed
	// while a tool runs. Default 10s.
	HeartbeatTimeout time.Duration
	// LocalActivityMax is LOCAL_ACTIVITY_MAX: read-only tools whose timeout is
	// at most this run as local activities, in the workflow task itself, which
	// saves a round trip through the server per call (measured in
	// BENCHMARKS.md). Tools with side effects never do. 0 turns it off.
	// Default 30s.
	LocalActivityMax time.Duration
	// LargeResult is LARGE_RESULT_BYTES: results above it are kept outside
	// workflow history. Default 131072.
	LargeResult int
	// LogLevel is LOG_LEVEL (debug, info, warn, error). Default info.
	LogLevel slog.Level
	// LogFormat is LOG_FORMAT: text or json (one JSON object a line).
	// Default text.
	LogFormat string

	// SearchURL is SEARCH_URL, the base URL of a SearXNG instance for
	// search_web. Default none: search_web says no backend is configured.
	SearchURL string
	// Media is the OpenAI-compatible endpoint of generate_image and
	// generate_audio (G5): MEDIA_BASE_URL, MEDIA_API_KEY, MEDIA_MODEL, and
	// MEDIA_IMAGE_MODEL / MEDIA_AUDIO_MODEL for one of the two. Default
	// none: both tools answer that the worker has no media endpoint.
	Media files.MediaConfig
	// Chatbots are the named agents of AGENTS_CONFIG (G3), which
	// list_chatbot lists and send_to_chatbot talks to. A file that does not
	// read, or an entry that is wrong, stops the worker at start.
	Chatbots []round.Chatbot
	// LLMAPI is LLM_API (chat, anthropic or responses), which a chatbot's
	// llm_api must match.
	LLMAPI string
	// Decision is the model that filters fetch_page and search_web results:
	// DECISION_BASE_URL, DECISION_MODEL, DECISION_API_KEY, DECISION_API,
	// DECISION_TIMEOUT, DECISION_MAX_CHARS. Default: the extractive filter.
	Decision decision.Config
	// DenyPrivate is HTTP_DENY_PRIVATE=true: the HTTP tools may not reach
	// loopback and private addresses. Default false (the cloud metadata
	// address is always denied).
	DenyPrivate bool
	// IdempotentHosts is HTTP_IDEMPOTENT_HOSTS, comma-separated hosts (or
	// host:port) that honour Idempotency-Key: an http_request POST or PATCH
	// to one of them is retried after a lost attempt under the same key
	// instead of ending unknown_outcome (web.Config.IdempotentHosts).
	// Default none.
	IdempotentHosts []string
	// HostConcurrency and HostLimits are HTTP_HOST_CONCURRENCY
	// (web.ParseHostConcurrency): how many HTTP calls of a round run at
	// once to one host, and per-host exceptions. Default: MaxConcurrent's
	// bound for every host.
	HostConcurrency int
	HostLimits      map[string]int
	// Secrets locates the key that seals store_secret values:
	// TOOLROUND_SECRET_KEY or TOOLROUND_SECRET_KEY_FILE (default
	// ~/.config/toolround/secret.key, created on first use).
	Secrets secrets.Config
	// MCPConfig is MCP_CONFIG, a JSON file of MCP servers whose tools join the
	// catalog. Default none.
	MCPConfig string
	// ToolsConfig is TOOLS_CONFIG, a JSON file of script_* and ext_* tools.
	// Default none.
	ToolsConfig string
	// TLS configures mTLS to the Temporal frontend: TEMPORAL_TLS_CERT and
	// TEMPORAL_TLS_KEY (the client certificate and key, PEM files),
	// TEMPORAL_TLS_CA (the server's CA; default the system roots) and
	// TEMPORAL_TLS_SERVER_NAME. Default none: plain connections.
	TLS TLSConfig
	// APIKey is TEMPORAL_API_KEY (Temporal Cloud); it implies TLS.
	APIKey string
	// Sandbox confines run_command, background_command and script_*
	// processes: SANDBOX, COMMAND_NETWORK, COMMAND_CPU_SECONDS,
	// COMMAND_MEMORY_MB, COMMAND_MAX_PROCS, COMMAND_FILE_SIZE_MB and
	// SANDBOX_READ_ONLY, SANDBOX_USER (docs/sandbox.md).
	Sandbox sandbox.Config
	// RuleKey locates the key that signs the allow rules of run states (T4):
	// TOOLROUND_RULE_KEY or TOOLROUND_RULE_KEY_FILE (default
	// ~/.config/toolround/rule.key, created on first use).
	RuleKey approval.KeyConfig
	// DenyAutoApprove is AUTO_APPROVE=deny: the worker ignores the
	// auto_approve of every round (T5). Default allow.
	DenyAutoApprove bool
	// Limits is WORKER_LIMITS, the limits of every run whatever its input
	// says, as JSON with the fields of a round's limits
	// ({"max_calls": 500, "max_seconds": 7200}; B1). Default none.
	Limits round.Limits
	// ContextTokens is LLM_CONTEXT_TOKENS, the context budget of an agent
	// run's model requests (B3), estimated at 4 bytes a token. Default
	// 100000; at least 1000.
	ContextTokens int
	// SubagentDepth is SUBAGENT_DEPTH (G1): how many hops of subagents
	// from a run; at the last, a subagent starts none. Default 1, 1 to 8.
	SubagentDepth int
	// Notify are the webhooks of waits (N1): NOTIFY_URL, NOTIFY_ROUTES,
	// NOTIFY_SECRET, NOTIFY_FORMAT, NOTIFY_RETRY, and for signed links (N2)
	// CONSOLE_URL, NOTIFY_APPROVER and CONSOLE_TOKENS (whose scope for the
	// approver decides which sessions get links). Default none.
	Notify notify.Config
	// BuildID is WORKER_BUILD_ID, the build this worker runs (V1): in its
	// log, each round's memo, a round's progress, the console and the
	// metrics. Default: the binary's VCS revision (build.go).
	BuildID string
	// StopTimeout is WORKER_STOP_TIMEOUT: on SIGTERM the worker stops
	// polling and waits this long for the calls it runs to end, so that a
	// rolling upgrade drains it (V1). Default 1m.
	StopTimeout time.Duration
	// Deployment is WORKER_DEPLOYMENT, the Temporal worker deployment this
	// worker is a version of (BuildID): Worker Versioning, with rounds and
	// agent runs AutoUpgrade (V1). Default none: an unversioned worker.
	Deployment string
	// ConsoleTokens is CONSOLE_TOKENS, read for NOTIFY_APPROVER's scope.
	ConsoleTokens string
	// LinkKey locates the key that signs links (N2): NOTIFY_LINK_KEY or
	// NOTIFY_LINK_KEY_FILE (default ~/.config/toolround/link.key, created on
	// first use); loaded only when links can be minted.
	LinkKey notify.LinkKeyConfig
	// MetricsAddr is METRICS_ADDR, where the worker serves /metrics in the
	// Prometheus text format (e.g. 127.0.0.1:9464). Default none.
	MetricsAddr string
	// HealthAddr is HEALTH_ADDR, where the worker serves /healthz and
	// /readyz (O2). Default METRICS_ADDR when that is set (one server for
	// both), else 127.0.0.1:8781; "off" serves neither.
	HealthAddr string
}

// TLSConfig locates the files of an mTLS connection to Temporal.
type TLSConfig = envconf.TLS

// temporal is the connection part of the configuration, which workers share
// with clients (envconf).
func (c Config) temporal() envconf.Temporal {
	return envconf.Temporal{Address: c.TemporalAddress, Namespace: c.Namespace, TaskQueue: c.TaskQueue, TLS: c.TLS, APIKey: c.APIKey}
}

// ConfigFromEnv reads the configuration from the environment.
func ConfigFromEnv() (Config, error) {
	t := envconf.TemporalFromEnv()
	c := Config{
		TemporalAddress: t.Address,
		Namespace:       t.Namespace,
		TaskQueue:       t.TaskQueue,
		TLS:             t.TLS,
		APIKey:          t.APIKey,
		RedisURL:        envconf.RedisURL(),
		Workdir:         envconf.Get("TOOLS_WORKDIR", "./workdir"),
		Workspace:       envconf.Get(tools.EnvWorkspace, tools.WorkspaceShared),
	}
	var err error
	if c.Workspace != tools.WorkspaceShared && c.Workspace != tools.WorkspaceSession {
		return c, fmt.Errorf("%s=%q: want shared or session", tools.EnvWorkspace, c.Workspace)
	}
	if c.WorkspaceMaxBytes, err = parseBytes(tools.EnvWorkspaceMaxBytes); err != nil {
		return c, err
	}
	if c.WorkspaceTTL, err = envDuration(workspace.EnvTTL, 0); err != nil {
		return c, err
	}
	if c.Placement, err = placement.ParsePlacement(os.Getenv(placement.EnvPlacement)); err != nil {
		return c, err
	}
	if c.HostID = strings.TrimSpace(os.Getenv(placement.EnvHostID)); c.HostID != "" {
		if err := placement.CheckHostID(c.HostID); err != nil {
			return c, err
		}
	}
	if c.HostTimeout, err = envDuration(placement.EnvHostTimeout, placement.DefaultHostTimeout); err != nil {
		return c, err
	}
	if c.HostTimeout < placement.MinHostTimeout {
		return c, fmt.Errorf("%s=%s: want at least %s", placement.EnvHostTimeout, c.HostTimeout, placement.MinHostTimeout)
	}
	if c.ToolQueues, err = usertools.ParseQueues(os.Getenv("TOOL_QUEUES")); err != nil {
		return c, err
	}
	if c.ToolWorkerTTL, err = envDuration("TOOL_WORKER_TTL", usertools.DefaultTTL); err != nil {
		return c, err
	}
	if c.MaxConcurrent, err = envInt("MAX_CONCURRENT_TOOLS", 0); err != nil {
		return c, err
	}
	if c.ConfirmTimeout, err = confirmTimeoutFromEnv(); err != nil {
		return c, err
	}
	if c.HeartbeatTimeout, err = envDuration("HEARTBEAT_TIMEOUT", 10*time.Second); err != nil {
		return c, err
	}
	if c.LocalActivityMax, err = envDuration("LOCAL_ACTIVITY_MAX", 30*time.Second); err != nil {
		return c, err
	}
	if c.LargeResult, err = envInt("LARGE_RESULT_BYTES", 128<<10); err != nil {
		return c, err
	}
	c.SearchURL = envconf.Get(web.EnvSearchURL, "")
	if c.Media, err = mediaFromEnv(); err != nil {
		return c, err
	}
	if path := envconf.Get(agent.EnvAgentsConfig, ""); path != "" {
		if c.Chatbots, err = agent.LoadChatbots(path); err != nil {
			return c, fmt.Errorf("%s: %w", agent.EnvAgentsConfig, err)
		}
	}
	if lc, err := llm.ConfigFromEnv(os.Getenv); err == nil {
		c.LLMAPI = lc.API
	}
	if c.Decision, err = decision.ConfigFromEnv(os.Getenv); err != nil {
		return c, err
	}
	if v := envconf.Get("HTTP_DENY_PRIVATE", "false"); v != "false" && v != "0" {
		if v != "true" && v != "1" {
			return c, fmt.Errorf("HTTP_DENY_PRIVATE=%q: want true or false", v)
		}
		c.DenyPrivate = true
	}
	for _, h := range strings.Split(envconf.Get("HTTP_IDEMPOTENT_HOSTS", ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.IdempotentHosts = append(c.IdempotentHosts, h)
		}
	}
	if c.HostConcurrency, c.HostLimits, err = web.ParseHostConcurrency(envconf.Get(web.EnvHostConcurrency, "")); err != nil {
		return c, err
	}
	c.Secrets = secrets.ConfigFromEnv()
	c.RuleKey = approval.KeyConfigFromEnv()
	if c.DenyAutoApprove, err = approval.ParseAutoApprove(os.Getenv(approval.EnvAutoApprove)); err != nil {
		return c, err
	}
	if c.Limits, err = round.ParseLimits(os.Getenv(EnvWorkerLimits), EnvWorkerLimits); err != nil {
		return c, err
	}
	if c.ContextTokens, err = envInt(EnvContextTokens, DefaultContextTokens); err != nil {
		return c, err
	}
	if c.ContextTokens < MinContextTokens {
		return c, fmt.Errorf("%s=%d: want at least %d", EnvContextTokens, c.ContextTokens, MinContextTokens)
	}
	if c.SubagentDepth, err = envInt(EnvSubagentDepth, round.DefaultSubagentDepth); err != nil {
		return c, err
	}
	if c.SubagentDepth < 1 || c.SubagentDepth > MaxSubagentDepth {
		return c, fmt.Errorf("%s=%d: want 1 to %d", EnvSubagentDepth, c.SubagentDepth, MaxSubagentDepth)
	}
	c.MCPConfig = envconf.Get(mcp.ConfigEnv, "")
	c.ToolsConfig = envconf.Get(ext.ConfigEnv, "")
	c.MetricsAddr = envconf.Get("METRICS_ADDR", "")
	c.HealthAddr = envconf.Get("HEALTH_ADDR", "")
	if c.HealthAddr == "" {
		c.HealthAddr = c.MetricsAddr
	}
	if c.HealthAddr == "" {
		c.HealthAddr = DefaultHealthAddr
	}
	if c.Notify, err = notify.ConfigFromEnv(os.Getenv); err != nil {
		return c, err
	}
	if c.BuildID, c.Deployment, err = buildFromEnv(); err != nil {
		return c, err
	}
	if c.StopTimeout, err = envDuration("WORKER_STOP_TIMEOUT", time.Minute); err != nil {
		return c, err
	}
	c.ConsoleTokens = envconf.Get("CONSOLE_TOKENS", "")
	c.LinkKey = notify.LinkKeyConfigFromEnv()
	if c.Sandbox, err = sandbox.ConfigFromEnv(os.Getenv); err != nil {
		return c, err
	}
	switch c.LogFormat = envconf.Get("LOG_FORMAT", "text"); c.LogFormat {
	case "text", "json":
	default:
		return c, fmt.Errorf("LOG_FORMAT=%q: want text or json", c.LogFormat)
	}
	if lvl := os.Getenv("LOG_LEVEL"); lvl != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lvl)); err != nil {
			return c, fmt.Errorf("LOG_LEVEL=%q: %w", lvl, err)
		}
	}
	return c, nil
}

// parseBytes reads a size in bytes, with an optional K, M or G (powers of
// 1024); unset is 0.
func parseBytes(name string) (int64, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return 0, nil
	}
	mult := int64(1)
	switch strings.ToUpper(v[len(v)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	num := v
	if mult > 1 {
		num = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%s=%q: want a size in bytes above 0, such as 1073741824 or 1G", name, v)
	}
	return n * mult, nil
}

func envInt(name string, def int) (int, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number, 0 or more", name, v)
	}
	return n, nil
}

func envDuration(name string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 30s or 10m", name, v)
	}
	return d, nil
}

// confirmTimeoutFromEnv reads CONFIRM_TIMEOUT (default 30m) within the
// bounds of a round's confirm_timeout_seconds, 1 s to 7 days (T3): a longer
// default would make an extend, which caps the wait at 7 days, shorten it.
// A bare number is seconds, checked before it is multiplied.
func confirmTimeoutFromEnv() (time.Duration, error) {
	const name = "CONFIRM_TIMEOUT"
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return 30 * time.Minute, nil
	}
	bad := fmt.Errorf("%s=%q: want a duration from %ds to %dh (7 days), such as 30m or 1800, as for a round's confirm_timeout_seconds",
		name, v, int(round.MinConfirmTimeout/time.Second), int(round.MaxConfirmTimeout/time.Hour))
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < int64(round.MinConfirmTimeout/time.Second) || n > int64(round.MaxConfirmTimeout/time.Second) {
			return 0, bad
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < round.MinConfirmTimeout || d > round.MaxConfirmTimeout {
		return 0, bad
	}
	return d, nil
}

// FromEnv is how a worker process starts: its configuration from the
// environment (ConfigFromEnv) and a logger that writes to stderr at
// LOG_LEVEL, as text or, with LOG_FORMAT=json, one JSON object a line.
func FromEnv() (Config, *slog.Logger, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return cfg, nil, err
	}
	return cfg, NewLogger(os.Stderr, cfg), nil
}

// NewLogger is the worker's logger on w, in cfg's format and level.
func NewLogger(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// EnvSubagentDepth names how many hops of subagents a run may start (G1);
// MaxSubagentDepth is the most it takes.
const (
	EnvSubagentDepth = "SUBAGENT_DEPTH"
	MaxSubagentDepth = 8
)

// EnvContextTokens names the context budget of an agent run's model
// requests (B3); DefaultContextTokens is its default, MinContextTokens the
// least it takes.
const (
	EnvContextTokens     = "LLM_CONTEXT_TOKENS"
	DefaultContextTokens = 100_000
	MinContextTokens     = 1000
)

// EnvWorkerLimits names the worker's run limits (B1).
const EnvWorkerLimits = "WORKER_LIMITS"

// mediaFromEnv reads G5's endpoint; a base URL that is not http or https
// stops the worker at start.
func mediaFromEnv() (files.MediaConfig, error) {
	m := files.MediaConfig{
		BaseURL: envconf.Get("MEDIA_BASE_URL", ""), APIKey: os.Getenv("MEDIA_API_KEY"),
		Model: envconf.Get("MEDIA_MODEL", ""), ImageModel: envconf.Get("MEDIA_IMAGE_MODEL", ""), AudioModel: envconf.Get("MEDIA_AUDIO_MODEL", ""),
	}
	if m.BaseURL == "" {
		return m, nil
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return m, fmt.Errorf("MEDIA_BASE_URL=%q: want an http or https URL such as https://api.openai.com/v1", m.BaseURL)
	}
	return m, nil
}
