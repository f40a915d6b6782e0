// Package command runs shell commands in the tools' workdir: run_command waits
// for one command, background_command starts, watches and stops long ones.
package command

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// Tool names.
const (
	RunCommand        = "run_command"
	BackgroundCommand = "background_command"
)

// DefaultPassEnv are the worker's environment variables a command inherits
// when Config.PassEnv is nil.
var DefaultPassEnv = []string{"PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "USER", "LOGNAME"}

// SecretEnv are patterns ('*' matches any run of characters) of variable
// names that are never passed from the worker's environment, even when
// PassEnv names them: the worker's own connections and anything that looks
// like a credential. Config.Env can still set such a variable explicitly.
var SecretEnv = []string{
	"REDIS_*", "TEMPORAL_*", "TOOLS_*", "DATABASE_URL", "*_URL",
	"*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*",
	"*AUTH*", "*COOKIE*", "*SESSION*", "AWS_*", "GOOGLE_*", "AZURE_*", "GITHUB_*",
}

// Config configures both tools. Zero fields take the defaults written beside them.
type Config struct {
	// Workdir is where commands run and where background output is kept.
	// Required.
	Workdir *tools.Workdir
	// DefaultTimeout bounds a run_command call without timeout_seconds.
	// Default 2 minutes.
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeout_seconds a call may ask for. Default 30
	// minutes. The tool's activity timeout is set above it, so that the
	// handler, which kills the command, always sees the timeout first.
	MaxTimeout time.Duration
	// OutputLimit is how many bytes of output a result keeps: the first and the
	// last half, with the number of bytes left out in between. The rest is read
	// and counted, never kept. Default 64 KiB.
	OutputLimit int
	// PassEnv names the worker's environment variables that commands inherit;
	// an entry ending in '*' is a prefix ("LC_*"). Names matching SecretEnv are
	// never passed. Default DefaultPassEnv. PATH is set to
	// /usr/local/bin:/usr/bin:/bin when the result has none.
	PassEnv []string
	// Env holds "NAME=value" entries set for every command, after PassEnv.
	// Default none.
	Env []string
	// MaxBackground bounds the background processes running at once.
	// Default 16.
	MaxBackground int
	// BackgroundLogLimit stops a background process whose output file grows
	// past it. Default 1 GiB.
	BackgroundLogLimit int64
	// MaxWait is the largest wait_seconds of a background_command call.
	// Default 5 minutes.
	MaxWait time.Duration
	// KillGrace is how long a process group has between SIGTERM and SIGKILL,
	// and how long a command's output may stay open after it ends.
	// Default 2 seconds.
	KillGrace time.Duration
	// ProgressInterval is how often a running call reports progress.
	// Default 5 seconds.
	ProgressInterval time.Duration
	// Sandbox confines the commands (SANDBOX, COMMAND_NETWORK and the
	// COMMAND_* limits; see package sandbox). Nil: mode none, commands run
	// unconfined as the worker's user.
	Sandbox *sandbox.Sandbox
}

func (c Config) withDefaults() (Config, error) {
	if c.Workdir == nil {
		return c, errors.New("command: Config.Workdir is required")
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 2 * time.Minute
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = 30 * time.Minute
	}
	if c.MaxTimeout < time.Second {
		return c, fmt.Errorf("command: MaxTimeout %s is under a second", c.MaxTimeout)
	}
	if c.DefaultTimeout > c.MaxTimeout {
		return c, fmt.Errorf("command: DefaultTimeout %s exceeds MaxTimeout %s", c.DefaultTimeout, c.MaxTimeout)
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = 64 << 10
	}
	if c.PassEnv == nil {
		c.PassEnv = DefaultPassEnv
	}
	for _, e := range c.Env {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" {
			return c, fmt.Errorf("command: Config.Env entry %q is not NAME=value", e)
		}
	}
	if c.MaxBackground <= 0 {
		c.MaxBackground = 16
	}
	if c.BackgroundLogLimit <= 0 {
		c.BackgroundLogLimit = 1 << 30
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 5 * time.Minute
	}
	if c.KillGrace <= 0 {
		c.KillGrace = 2 * time.Second
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 5 * time.Second
	}
	return c, nil
}

// Tools runs the commands of both tools and keeps the registry of background
// processes. Close stops the background processes that still run.
type Tools struct {
	cfg     Config
	env     []string
	sandbox *sandbox.Sandbox
	// instance tells this Tools apart from earlier workers in the status files.
	instance string
	worker   string

	mu     sync.Mutex
	bg     map[string]*bgProc
	closed bool
}

// New checks cfg and returns the tools.
func New(cfg Config) (*Tools, error) {
	keepHangups()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	sb := cfg.Sandbox
	if sb == nil {
		if sb, err = sandbox.New(sandbox.Config{Mode: sandbox.ModeNone}, cfg.Workdir.Dir()); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname()
	return &Tools{
		cfg:      cfg,
		sandbox:  sb,
		env:      BuildEnv(os.Environ(), cfg.PassEnv, cfg.Env),
		instance: randomHex(8),
		worker:   fmt.Sprintf("%s pid %d", host, os.Getpid()),
		bg:       make(map[string]*bgProc),
	}, nil
}

// Register adds run_command and background_command to reg.
func Register(reg *tools.Registry, cfg Config) error {
	t, err := New(cfg)
	if err != nil {
		return err
	}
	for _, d := range t.Definitions() {
		if err := reg.Register(d); err != nil {
			return err
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// BuildEnv keeps the variables of environ that pass names and SecretEnv does
// not, then applies extra ("NAME=value" entries), and sets a default PATH
// when none is left. It is the environment of run_command,
// background_command and script_* processes.
func BuildEnv(environ, pass, extra []string) []string {
	vals := map[string]string{}
	var order []string
	set := func(name, val string) {
		if _, seen := vals[name]; !seen {
			order = append(order, name)
		}
		vals[name] = val
	}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !matchAny(pass, name) || matchAny(SecretEnv, strings.ToUpper(name)) {
			continue
		}
		set(name, val)
	}
	for _, kv := range extra {
		name, val, _ := strings.Cut(kv, "=")
		set(name, val)
	}
	if _, ok := vals["PATH"]; !ok {
		set("PATH", "/usr/local/bin:/usr/bin:/bin")
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+vals[name])
	}
	return env
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if wildcard(p, name) {
			return true
		}
	}
	return false
}

// wildcard matches s against p where '*' is any run of characters.
func wildcard(p, s string) bool {
	parts := strings.Split(p, "*")
	if len(parts) == 1 {
		return p == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// Definitions returns the definitions of run_command and background_command.
func (t *Tools) Definitions() []tools.Definition {
	return []tools.Definition{t.runDefinition(), t.backgroundDefinition()}
}
