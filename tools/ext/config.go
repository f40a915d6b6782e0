package ext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/jsonconf"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/netguard"
)

// ConfigEnv is the environment variable that names the tools file a worker
// reads.
const ConfigEnv = "TOOLS_CONFIG"

// Defaults of Config, set in one place.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxOutputBytes = 256 << 10
	// maxTimeout catches timeouts given in milliseconds by mistake.
	maxTimeout = 24 * time.Hour
)

// Name prefixes of the two kinds of tool.
const (
	ScriptPrefix = tools.ScriptPrefix
	ExtPrefix    = "ext_"
)

// Config is the set of script_* and ext_* tools and how they run.
type Config struct {
	// Tools are the configured tools, in file order; names are unique.
	Tools []ToolConfig
	// Timeout bounds one call of a tool whose entry sets no timeout_seconds.
	// Default DefaultTimeout (60s).
	Timeout time.Duration
	// MaxOutputBytes caps a script's stdout and stderr, each, and an HTTP
	// response body; the rest is cut with a note. Default DefaultMaxOutputBytes
	// (256 KiB).
	MaxOutputBytes int
	// Network is the policy every ext_* request dials through. Nil means
	// netguard.DefaultPolicy() (everything but cloud metadata addresses).
	Network *netguard.Policy
	// Sandbox confines script_* processes as it does run_command. Nil: mode
	// none.
	Sandbox *sandbox.Sandbox
	// PassEnv names the worker's environment variables that scripts inherit,
	// as command.Config.PassEnv does for run_command; names matching
	// command.SecretEnv are never passed. Default command.DefaultPassEnv.
	PassEnv []string
	// Dir is the folder of the tools file (Load sets it): with
	// WORKSPACE=session, a script's program is found there (RegisterIn).
	Dir string
}

// ToolConfig is one entry of the tools file.
type ToolConfig struct {
	// Name starts with script_ (a command) or ext_ (an HTTP endpoint).
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments, an object schema.
	Parameters json.RawMessage `json:"parameters"`
	// Concurrent tools may run alongside others (C2); default false.
	Concurrent bool `json:"concurrent,omitempty"`
	// ReadOnly is short for side_effect "read_only".
	ReadOnly bool `json:"read_only,omitempty"`
	// SideEffect is "read_only", "idempotent" or "at_most_once" (default,
	// unless read_only is set).
	SideEffect tools.SideEffect `json:"side_effect,omitempty"`
	// TimeoutSeconds bounds one call (default Config.Timeout).
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`

	// Command is the argv of a script_* tool, run in TOOLS_WORKDIR with the
	// call's JSON arguments on stdin and in TOOL_ARGS. Its environment is
	// run_command's (Config.PassEnv minus anything that looks like a
	// credential), the call's variables, and Env.
	Command []string `json:"command,omitempty"`
	// Env is added to a script's environment; "${NAME}" in a value is replaced
	// by the worker's variable NAME: the one way to hand a script a variable
	// of the worker that the allow-list keeps out, a key included.
	Env map[string]string `json:"env,omitempty"`

	// URL is the endpoint an ext_* tool POSTs the arguments to.
	URL string `json:"url,omitempty"`
	// Headers are sent with every request ("${NAME}" is expanded as in Env).
	Headers map[string]string `json:"headers,omitempty"`
}

func (t ToolConfig) script() bool { return strings.HasPrefix(t.Name, ScriptPrefix) }

// effect is the tool's side-effect class.
func (t ToolConfig) effect() tools.SideEffect {
	switch {
	case t.ReadOnly:
		return tools.ReadOnly
	case t.SideEffect != "":
		return t.SideEffect
	default:
		return tools.AtMostOnce
	}
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.Network == nil {
		p := netguard.DefaultPolicy()
		c.Network = &p
	}
	if c.PassEnv == nil {
		c.PassEnv = command.DefaultPassEnv
	}
	return c
}

// Load reads a tools file:
//
//	{"tools": [{"name": "script_lint", "description": "...", "parameters": {...},
//	            "command": ["./lint.sh"]},
//	           {"name": "ext_ticket", "description": "...", "parameters": {...},
//	            "url": "https://...", "headers": {"Authorization": "Bearer ${TOKEN}"}}]}
//
// It is strict: unknown fields, bad names, schemas that do not compile and
// misplaced fields are errors that name the entry and the field, all of
// them at once. The other Config fields keep their zero values (defaults).
func Load(path string) (Config, error) {
	cfg, err := jsonconf.Load(path, "ext: tools config", Parse)
	if err == nil {
		cfg.Dir, err = filepath.Abs(filepath.Dir(path))
	}
	return cfg, err
}

// Parse is Load for the file's content.
func Parse(data []byte) (Config, error) {
	var file struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := jsonconf.DecodeStrict(data, &file); err != nil {
		return Config{}, fmt.Errorf(`want {"tools": [...]}: %w`, err)
	}
	if file.Tools == nil {
		return Config{}, errors.New(`no "tools" array`)
	}
	var (
		cfg  Config
		errs []error
		seen = make(map[string]int)
	)
	for i, raw := range file.Tools {
		var probe struct {
			Name any `json:"name"`
		}
		_ = json.Unmarshal(raw, &probe)
		label := fmt.Sprintf("entry %d", i+1)
		if name, ok := probe.Name.(string); ok && name != "" {
			label += fmt.Sprintf(" (%s)", name)
		}
		var tc ToolConfig
		if err := jsonconf.DecodeStrict(raw, &tc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", label, err))
			continue
		}
		if err := tc.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", label, err))
			continue
		}
		if first, dup := seen[tc.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: name: %q is already used by entry %d", label, tc.Name, first))
			continue
		}
		seen[tc.Name] = i + 1
		cfg.Tools = append(cfg.Tools, tc)
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validate checks one entry; errors name the field.
func (t ToolConfig) validate() error {
	switch {
	case t.Name == "":
		return errors.New("name: missing")
	case !strings.HasPrefix(t.Name, ScriptPrefix) && !strings.HasPrefix(t.Name, ExtPrefix):
		return fmt.Errorf("name: %q must start with %q (a command) or %q (an HTTP endpoint)", t.Name, ScriptPrefix, ExtPrefix)
	case t.Name == ScriptPrefix || t.Name == ExtPrefix:
		return fmt.Errorf("name: %q needs something after the prefix", t.Name)
	case !validName.MatchString(t.Name):
		return fmt.Errorf("name: %q must be at most 64 letters, digits, '_' or '-'", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return errors.New("description: missing; the model chooses tools by it")
	}
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return errors.New(`parameters: missing; use {"type":"object","properties":{}} for a tool without arguments`)
	}
	if _, err := tools.CompileSchema(t.Parameters); err != nil {
		return fmt.Errorf("parameters: %w", err)
	}
	switch t.SideEffect {
	case "", tools.ReadOnly, tools.Idempotent, tools.AtMostOnce:
	default:
		return fmt.Errorf("side_effect: %q is unknown; use %q, %q or %q", t.SideEffect, tools.ReadOnly, tools.Idempotent, tools.AtMostOnce)
	}
	if t.ReadOnly && t.SideEffect != "" && t.SideEffect != tools.ReadOnly {
		return fmt.Errorf("side_effect: %q contradicts read_only: true", t.SideEffect)
	}
	if t.TimeoutSeconds < 0 {
		return errors.New("timeout_seconds: must not be negative")
	}
	if time.Duration(t.TimeoutSeconds*float64(time.Second)) > maxTimeout {
		return fmt.Errorf("timeout_seconds: %v is more than a day; the unit is seconds", t.TimeoutSeconds)
	}
	if t.script() {
		if t.URL != "" || len(t.Headers) > 0 {
			return fmt.Errorf(`url, headers: a %s tool runs a command; only %s tools call a URL`, ScriptPrefix, ExtPrefix)
		}
		if len(t.Command) == 0 || t.Command[0] == "" {
			return errors.New(`command: missing; give the argv as an array, e.g. ["./tool.sh", "--flag"]`)
		}
		return jsonconf.CheckExpansions("env", t.Env)
	}
	if len(t.Command) > 0 || len(t.Env) > 0 {
		return fmt.Errorf(`command, env: an %s tool calls a URL; only %s tools run a command`, ExtPrefix, ScriptPrefix)
	}
	if t.URL == "" {
		return errors.New("url: missing")
	}
	if !jsonconf.IsHTTPURL(t.URL) {
		return fmt.Errorf("url: %q is not an http or https URL", t.URL)
	}
	return jsonconf.CheckExpansions("headers", t.Headers)
}

// expandEnv replaces "${NAME}" with the worker's variable NAME (see
// jsonconf.ExpandEnv).
var expandEnv = jsonconf.ExpandEnv
