// Package decision is the decision model that trims fetch_page and search_web
// results to what matters for a query (K3): a chat model when one is
// configured, a deterministic extractive filter otherwise and as a fallback.
package decision

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/llm"
)

// Filter keeps the parts of content that are relevant to query, within a
// bounded length. An empty query keeps the head of the content.
type Filter interface {
	Filter(ctx context.Context, query, content string) (string, error)
}

// Environment variables that ConfigFromEnv reads.
const (
	EnvBaseURL  = "DECISION_BASE_URL"
	EnvModel    = "DECISION_MODEL"
	EnvAPIKey   = "DECISION_API_KEY"
	EnvTimeout  = "DECISION_TIMEOUT"   // a Go duration, such as 20s
	EnvMaxChars = "DECISION_MAX_CHARS" // an integer
	EnvAPI      = "DECISION_API"       // chat (default), anthropic or responses
)

// Config configures New. The zero value gives the extractive filter with its
// defaults.
type Config struct {
	// BaseURL of an OpenAI-compatible API, up to and including the version
	// segment (https://api.openai.com/v1, http://127.0.0.1:11434/v1); the
	// client posts to BaseURL + "/chat/completions". Empty: no model, the
	// extractive filter alone.
	BaseURL string
	// API is the API the model speaks, as LLM_API is for agent runs (F4):
	// llm.APIChat (empty too) posts to BaseURL + "/chat/completions",
	// llm.APIAnthropic to BaseURL + "/messages" (the Messages API, with
	// top-level system and max_tokens), llm.APIResponses to BaseURL +
	// "/responses" (instructions, store false).
	API string
	// Model names the chat model. Required when BaseURL is set.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout bounds one model call. Default 30s.
	Timeout time.Duration
	// MaxChars bounds what a filter returns. Default 6000.
	MaxChars int
	// PassThroughChars: content this short is returned as it is, without a
	// model call or extraction. Default 1500.
	PassThroughChars int
	// MaxInputChars bounds the content sent to the model; longer content is
	// first reduced by the extractive filter. Default 48000.
	MaxInputChars int
	// MaxTokens is sent as max_tokens. Default MaxChars/3; negative omits the
	// field, for servers that reject it.
	MaxTokens int
	// HTTPClient makes the model calls. Default: a client with no timeout of
	// its own (Timeout applies per call).
	HTTPClient *http.Client
	// Logger receives fallbacks to the extractive filter. Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultTimeout          = 30 * time.Second
	defaultMaxChars         = 6000
	defaultPassThroughChars = 1500
	defaultMaxInputChars    = 48000
)

// withDefaults is the one place the defaults of Config are set.
func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxChars <= 0 {
		c.MaxChars = defaultMaxChars
	}
	if c.PassThroughChars <= 0 {
		c.PassThroughChars = defaultPassThroughChars
	}
	if c.PassThroughChars > c.MaxChars {
		c.PassThroughChars = c.MaxChars
	}
	if c.MaxInputChars <= 0 {
		c.MaxInputChars = defaultMaxInputChars
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = max(c.MaxChars/3, 256)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// ConfigFromEnv reads DECISION_BASE_URL, DECISION_MODEL, DECISION_API_KEY,
// DECISION_API, DECISION_TIMEOUT and DECISION_MAX_CHARS through getenv (os.Getenv in a
// worker). Unset variables keep the defaults.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	conn, err := llm.Vars{BaseURL: EnvBaseURL, Model: EnvModel, APIKey: EnvAPIKey, Timeout: EnvTimeout, Errors: "decision", TimeoutExample: "20s"}.Read(getenv)
	if err != nil {
		return Config{}, err
	}
	c := Config{BaseURL: conn.BaseURL, Model: conn.Model, APIKey: conn.APIKey, Timeout: conn.Timeout}
	switch api := strings.ToLower(strings.TrimSpace(getenv(EnvAPI))); api {
	case "", llm.APIChat:
	case llm.APIAnthropic, llm.APIResponses:
		c.API = api
	default:
		return Config{}, fmt.Errorf("decision: %s=%q: want chat, anthropic or responses", EnvAPI, api)
	}
	if s := strings.TrimSpace(getenv(EnvMaxChars)); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("decision: %s=%q: want a positive integer", EnvMaxChars, s)
		}
		c.MaxChars = n
	}
	return c, nil
}

// New returns the chat-model filter when cfg names a model API, else the
// extractive filter.
func New(cfg Config) (Filter, error) {
	cfg = cfg.withDefaults()
	ext := Extractive{MaxChars: cfg.MaxChars, PassThroughChars: cfg.PassThroughChars}
	if cfg.BaseURL == "" {
		return ext, nil
	}
	lc := llm.Config{BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: cfg.APIKey, Timeout: cfg.Timeout, HTTPClient: cfg.HTTPClient, API: cfg.API}
	if cfg.MaxTokens > 0 {
		lc.MaxTokens = cfg.MaxTokens // the Messages API requires max_tokens; this bound is the filter's
	}
	model, err := llm.New(lc, EnvModel)
	if err != nil {
		return nil, fmt.Errorf("decision: %w", err)
	}
	return &Chat{cfg: cfg, model: model, fallback: ext}, nil
}
