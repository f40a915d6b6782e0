package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// Config configures the agent tools. Zero fields take the defaults named in
// their comments, set in one place (withDefaults).
type Config struct {
	// Chatbots are AGENTS_CONFIG's agents, which list_chatbot lists (G3).
	Chatbots []round.Chatbot
	// Store keeps the per-session data (see the package comment); the worker
	// passes cache.SessionData, over Redis. Nil: an in-process store, not
	// shared between workers; chat_history then has no history to read.
	Store Store
	// Secrets keeps store_secret values; the worker passes the same store to
	// the tools that expand {{secret:NAME}}. Build it with
	// secrets.NewStore(key, secrets.StoreOptions{Hashes: ...}) and a key from
	// secrets.ConfigFromEnv().LoadKey(). Nil: an in-process store is built
	// from SecretKey. One of Secrets and SecretKey is required.
	Secrets *secrets.Store
	// SecretKey is the 32-byte sealing key used when Secrets is nil.
	SecretKey []byte
	// TTL is how long a session's todo list, errors and results live after
	// their last write. Default 30 days; negative: they never expire.
	TTL time.Duration

	// MaxExpressionChars bounds a calculate expression. Default 4096.
	MaxExpressionChars int
	// CalcMemoryBudget bounds the values one calculation may allocate,
	// counted in elements (a range 1..1000 costs 1000). Default 100000.
	CalcMemoryBudget uint

	// MaxTodoItems bounds a todo list. Default 200.
	MaxTodoItems int
	// MaxErrors is how many write_error records a session keeps (the oldest
	// go first). Default 500.
	MaxErrors int

	// HistoryScan is how many of the newest history messages chat_history
	// searches. Default 5000.
	HistoryScan int
	// HistoryMessageChars caps each message chat_history returns. Default 2000.
	HistoryMessageChars int
	// HistoryMaxLimit bounds chat_history's limit argument. Default 200.
	HistoryMaxLimit int

	// MaxTemplateChars bounds an html_template template string. Default 65536.
	MaxTemplateChars int
	// MaxTemplateDataBytes bounds html_template's data as JSON. Default 262144.
	MaxTemplateDataBytes int
	// MaxTemplateOutput caps a rendered page, in bytes. Default 524288.
	MaxTemplateOutput int
	// TemplateSteps bounds the work of one rendering: every range iteration
	// and template call is a step. Default 100000.
	TemplateSteps int

	// MaxResultChars bounds write_result's content. Default 200000.
	MaxResultChars int
	// MaxSecretChars bounds a store_secret value (plain or sealed). Default 16384.
	MaxSecretChars int

	// Blobs is the blob store read_result reads (B3). Nil: read_result
	// says the worker has none.
	Blobs Blobs
	// ContextTokens is the worker's LLM_CONTEXT_TOKENS: read_result gives
	// at most a quarter of it (as many bytes, at 4 bytes a token). Default
	// 100000.
	ContextTokens int
}

// Defaults.
const (
	DefaultTTL                  = 30 * 24 * time.Hour
	DefaultMaxExpressionChars   = 4096
	DefaultCalcMemoryBudget     = 100_000
	DefaultMaxTodoItems         = 200
	DefaultMaxErrors            = 500
	DefaultHistoryScan          = 5000
	DefaultHistoryMessageChars  = 2000
	DefaultHistoryMaxLimit      = 200
	DefaultMaxTemplateChars     = 64 << 10
	DefaultMaxTemplateDataBytes = 256 << 10
	DefaultMaxTemplateOutput    = 512 << 10
	DefaultTemplateSteps        = 100_000
	DefaultMaxResultChars       = 200_000
	DefaultMaxSecretChars       = 16 << 10
	DefaultContextTokens        = 100_000
)

func (c Config) withDefaults() Config {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	setInt(&c.MaxExpressionChars, DefaultMaxExpressionChars)
	if c.CalcMemoryBudget == 0 {
		c.CalcMemoryBudget = DefaultCalcMemoryBudget
	}
	setInt(&c.MaxTodoItems, DefaultMaxTodoItems)
	setInt(&c.MaxErrors, DefaultMaxErrors)
	setInt(&c.HistoryScan, DefaultHistoryScan)
	setInt(&c.HistoryMessageChars, DefaultHistoryMessageChars)
	setInt(&c.HistoryMaxLimit, DefaultHistoryMaxLimit)
	setInt(&c.MaxTemplateChars, DefaultMaxTemplateChars)
	setInt(&c.MaxTemplateDataBytes, DefaultMaxTemplateDataBytes)
	setInt(&c.MaxTemplateOutput, DefaultMaxTemplateOutput)
	setInt(&c.TemplateSteps, DefaultTemplateSteps)
	setInt(&c.MaxResultChars, DefaultMaxResultChars)
	setInt(&c.MaxSecretChars, DefaultMaxSecretChars)
	setInt(&c.ContextTokens, DefaultContextTokens)
	return c
}

// Register adds the agent tools to reg. It does not add find_tools (the
// engine's).
func Register(reg *tools.Registry, cfg Config) error {
	defs, err := Definitions(cfg)
	if err != nil {
		return err
	}
	if err := reg.RegisterAll(defs...); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// Definitions returns the agent tools' definitions, for applications that
// register them themselves.
func Definitions(cfg Config) ([]tools.Definition, error) {
	defs, _, err := build(cfg)
	return defs, err
}

// build returns the definitions and the store they share.
func build(cfg Config) ([]tools.Definition, *toolset, error) {
	cfg = cfg.withDefaults()
	if cfg.Secrets == nil {
		if cfg.SecretKey == nil {
			return nil, nil, errors.New("agent: Config.Secrets or Config.SecretKey is required for store_secret: load a key with secrets.ConfigFromEnv().LoadKey()")
		}
		store, err := secrets.NewStore(cfg.SecretKey, secrets.StoreOptions{TTL: cfg.TTL})
		if err != nil {
			return nil, nil, fmt.Errorf("agent: %w", err)
		}
		cfg.Secrets = store
	}
	t := &toolset{cfg: cfg, st: cfg.Store, shared: cfg.Store != nil}
	if t.st == nil {
		t.st = newMemStore()
	}
	calc, err := newCalculator(cfg.MaxExpressionChars, cfg.CalcMemoryBudget)
	if err != nil {
		return nil, nil, err
	}
	apis, err := loadAPIs()
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := newRenderer(cfg)
	if err != nil {
		return nil, nil, err
	}
	return []tools.Definition{
		calc.definition(),
		t.writeTodo(),
		t.chatHistory(),
		t.writeError(),
		t.errorHistory(),
		t.storeSecret(),
		apis.definition(),
		tmpl.definition(),
		reasoningGuide(),
		t.writeResult(),
		askUser(),
		t.readResult(),
		Subagents(),
		BackgroundSubagents(),
		TestTool(),
		ListChatbot(cfg.Chatbots),
		SendToChatbot(),
	}, t, nil
}

// toolset holds what the storage-backed tools share.
type toolset struct {
	cfg Config
	st  Store
	// shared is false for the in-process store, which has no session history.
	shared bool
}

// truncate caps s at n bytes on a character boundary and says how much was
// cut.
func truncate(s string, n int) string { return text.Truncate(s, n, cutNote) }

func cutNote(cut int) string { return fmt.Sprintf("… [%d more bytes cut]", cut) }
