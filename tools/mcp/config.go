package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/jsonconf"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

// ConfigEnv is the environment variable that names the MCP configuration
// file a worker reads.
const ConfigEnv = "MCP_CONFIG"

// Defaults of Config, set in one place.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultMaxOutputBytes = 256 << 10
	DefaultSignInPoll     = 5 * time.Second
	// terminateWait is how long closing a stdio server waits for it to exit
	// after its stdin closes, and again after SIGTERM, before SIGKILL.
	terminateWait = 3 * time.Second
	// callGrace is how much longer than a call's timeout its activity may
	// run: time to kill a server that did not answer and say so.
	callGrace = 5 * time.Second
)

// DefaultInheritedEnv lists the worker's environment variables that stdio
// servers inherit; everything else they get comes from their "env" entry,
// so the worker's own credentials do not leak into third-party servers.
var DefaultInheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// BlobStore is where the worker keeps large contents (cache.Blobs).
type BlobStore interface {
	Put(ctx context.Context, content string) (string, error)
}

// Config says which MCP servers a worker connects to.
type Config struct {
	// Servers are the MCP servers, sorted by name; names are unique.
	Servers []ServerConfig
	// ConnectTimeout bounds starting one server, its handshake and listing its
	// tools, and each reconnection. Default DefaultConnectTimeout (30s).
	ConnectTimeout time.Duration
	// CallTimeout is the timeout of one call of a tool whose server entry sets
	// none. Default tools.DefaultTimeout.
	CallTimeout time.Duration
	// MaxOutputBytes caps the text of one result; the rest is cut with a note.
	// Default DefaultMaxOutputBytes (256 KiB).
	MaxOutputBytes int
	// Dir is where stdio servers start when their entry has no "cwd".
	// Default: the worker's working directory.
	Dir string
	// Blobs keeps the bytes a result carries that no format passes to a
	// model, audio and binary resources: base64, as images are, under a
	// reference that the result's line for them names ("; kept as REF").
	// Nil keeps none: the line gives only their type and size.
	Blobs BlobStore
	// Workspace is the folder a call acts in, which a server that asks for
	// roots (roots/list) is given as its one root. Default: Dir. With
	// WORKSPACE=session it is the call's session's folder, never the one
	// that holds every session's (W2); an error gives no root at all.
	Workspace func(ctx context.Context) (string, error)
	// Quota, with WORKSPACE=shared, is the workspace whose
	// WORKSPACE_MAX_BYTES (W3) a stdio server rooted in it keeps to (its
	// cwd, or Dir without one, lies in Quota.Dir()): it starts with
	// RLIMIT_FSIZE at the room left, and a call that leaves the workspace
	// over the limit ends workspace_full. Nil: no limit.
	Quota *tools.Workdir
	// SignIn has a person sign in for a streamable HTTP server that asks
	// for OAuth (E3, oauth.go), with RedirectURL as the redirect URI the
	// client registers. Nil: such a server does not connect, and its
	// status says it needs a sign-in (ErrNeedsSignIn).
	SignIn      SignInFunc
	RedirectURL string
	// Grants, without SignIn, are the sign-ins people made through the
	// console (grants.go): a server that asks for OAuth sends its grant's
	// token, refreshes it, and without one is recorded as needing a
	// sign-in and connected once a grant appears (checked every
	// SignInPoll, default DefaultSignInPoll).
	Grants     *Grants
	SignInPoll time.Duration
	// SignInLink is where a person signs in: the console's MCP page
	// (CONSOLE_URL + /mcp), named in the errors and the log.
	SignInLink string
	// NetPolicy guards every URL a server names that the worker or the
	// console fetches itself: OAuth metadata, registration and token
	// endpoints. Default netguard.DefaultPolicy().
	NetPolicy *netguard.Policy
	// Logger receives connection events, and the stderr lines of stdio
	// servers at debug level. Default slog.Default().
	Logger *slog.Logger
}

// ServerConfig is one MCP server: either a command run over stdio, or the
// URL of a streamable HTTP endpoint.
type ServerConfig struct {
	// Name identifies the server; its tools are named mcp_<name>_<tool>.
	Name string `json:"-"`
	// Type is "stdio" or "http" (also "streamable-http", "streamableHttp");
	// empty means stdio when Command is set and http when URL is.
	Type string `json:"type,omitempty"`

	// Command and Args start a stdio server.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the variables of DefaultInheritedEnv. "${NAME}" in a
	// value is replaced by the worker's variable NAME.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is where the command starts (default Config.Dir).
	Cwd string `json:"cwd,omitempty"`

	// URL is the streamable HTTP endpoint.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request ("${NAME}" is expanded as in Env).
	Headers map[string]string `json:"headers,omitempty"`

	// TimeoutSeconds bounds one call of this server's tools (default
	// Config.CallTimeout). A stdio server that has not answered by then has
	// its process group killed; the next call starts it again.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// Disabled servers are skipped.
	Disabled bool `json:"disabled,omitempty"`
	// OAuth registers the worker with the server's authorization server
	// beforehand (a client id and secret, or a client metadata document);
	// without it a server that asks for OAuth is registered with
	// dynamically. Streamable HTTP servers only.
	OAuth *OAuthConfig `json:"oauth,omitempty"`
	// TrustReadOnlyHints lets the readOnlyHint this server declares on a
	// tool skip confirmation (T5). Default false: the operator, not the
	// server, decides that a server tells the truth about its tools.
	TrustReadOnlyHints bool `json:"trust_read_only_hints,omitempty"`
}

func (s ServerConfig) stdio() bool { return s.Command != "" }

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = tools.DefaultTimeout
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.SignInPoll <= 0 {
		c.SignInPoll = DefaultSignInPoll
	}
	return c
}

// LoadConfig reads a configuration file of the common shape
//
//	{"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}}
//	                        | {"url": "...", "headers": {...}}}}
//
// An entry may add "trust_read_only_hints": true to let the server's
// readOnlyHint skip confirmation. Fields other clients add to an entry are
// ignored; the known ones are checked. The other Config fields keep their zero values (defaults).
func LoadConfig(path string) (Config, error) {
	return jsonconf.Load(path, "mcp: config", ParseConfig)
}

// ParseConfig is LoadConfig for the file's content.
func ParseConfig(data []byte) (Config, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Config{}, fmt.Errorf("not a JSON object: %w", err)
	}
	rawServers, ok := top["mcpServers"]
	if !ok {
		return Config{}, errors.New(`no "mcpServers" object`)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(rawServers, &servers); err != nil {
		return Config{}, fmt.Errorf(`"mcpServers" is not an object of servers by name: %w`, err)
	}
	var cfg Config
	var errs []error
	for name, raw := range servers {
		var s ServerConfig
		if err := json.Unmarshal(raw, &s); err != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", name, err))
			continue
		}
		s.Name = name
		if err := s.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if !s.Disabled {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return Config{}, errors.Join(errs...)
	}
	sort.Slice(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].Name < cfg.Servers[j].Name })
	return cfg, nil
}

func (s ServerConfig) validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("server %q: %s", s.Name, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s.Name) == "" {
		return fail("the name is empty")
	}
	if s.Command != "" && s.URL != "" {
		return fail(`has both "command" and "url"; a server is either a command (stdio) or a URL (streamable HTTP)`)
	}
	if s.Command == "" && s.URL == "" {
		return fail(`needs "command" (stdio) or "url" (streamable HTTP)`)
	}
	switch s.Type {
	case "":
	case "stdio":
		if s.Command == "" {
			return fail(`type "stdio" needs "command"`)
		}
	case "http", "streamable-http", "streamableHttp", "streamable_http":
		if s.URL == "" {
			return fail(`type %q needs "url"`, s.Type)
		}
	case "sse":
		return fail(`type "sse" (the legacy HTTP+SSE transport) is not supported; use the server's streamable HTTP endpoint`)
	default:
		return fail(`unknown type %q; use "stdio" or "http"`, s.Type)
	}
	if s.URL != "" {
		if !jsonconf.IsHTTPURL(s.URL) {
			return fail("url %q is not an http or https URL", s.URL)
		}
		if len(s.Env) > 0 || len(s.Args) > 0 || s.Cwd != "" {
			return fail(`"args", "env" and "cwd" only apply to a command (stdio) server`)
		}
	}
	if s.Command != "" && len(s.Headers) > 0 {
		return fail(`"headers" only apply to a URL (streamable HTTP) server`)
	}
	if s.OAuth != nil {
		if s.Command != "" {
			return fail(`"oauth" only applies to a URL (streamable HTTP) server`)
		}
		if s.OAuth.ClientSecret != "" && s.OAuth.ClientID == "" {
			return fail(`"oauth" has a client_secret without its client_id`)
		}
		if u := s.OAuth.ClientMetadataURL; u != "" && !strings.HasPrefix(u, "https://") {
			return fail("oauth client_metadata_url %q is not an https URL", u)
		}
	}
	if s.TimeoutSeconds < 0 {
		return fail("timeout_seconds is negative")
	}
	return nil
}

// environ is the environment of a stdio server.
func (s ServerConfig) environ() ([]string, error) {
	var env []string
	for _, k := range DefaultInheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := s.Env[k]; !override {
				env = append(env, k+"="+v)
			}
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := jsonconf.ExpandEnv(s.Env[k])
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

func (s ServerConfig) headers() (map[string]string, error) {
	out := make(map[string]string, len(s.Headers))
	for k, v := range s.Headers {
		ev, err := jsonconf.ExpandEnv(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[k] = ev
	}
	return out, nil
}

// RootedOutside refuses a stdio server that would start in dir or below,
// or whose program lies there: with WORKSPACE=session, dir is
// TOOLS_WORKDIR, which holds every session's workspace (W2). A server's
// root is its cwd, or Config.Dir without one.
func (c Config) RootedOutside(dir string) error {
	var errs []error
	for _, s := range c.Servers {
		if s.Disabled || !s.stdio() {
			continue
		}
		cwd := s.Cwd
		if cwd == "" {
			cwd = c.Dir
		}
		cwd, _ = filepath.Abs(cwd)
		if within(dir, cwd) {
			errs = append(errs, fmt.Errorf("server %q starts in %s, inside TOOLS_WORKDIR %s, which holds every session's workspace; give it a cwd outside", s.Name, cwd, dir))
			continue
		}
		prog := s.Command
		if strings.Contains(prog, "/") {
			if !filepath.IsAbs(prog) {
				prog = filepath.Join(cwd, prog)
			}
		} else if found, err := exec.LookPath(prog); err == nil {
			prog, _ = filepath.Abs(found)
		}
		if within(dir, prog) {
			errs = append(errs, fmt.Errorf("server %q runs %s, inside TOOLS_WORKDIR %s, which holds every session's workspace", s.Name, prog, dir))
		}
	}
	return errors.Join(errs...)
}

// within reports whether p is dir or lies below it, links resolved where
// they exist.
func within(dir, p string) bool {
	p, dir = resolved(p), resolved(dir)
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// resolved is p with the links of its longest existing part resolved.
func resolved(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}
