// Command console serves toolround's HTTP API and its page for people (H):
// submit rounds, read results and events, and answer what rounds wait for.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/console"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/keyfile"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/netguard"
)

const usage = `usage: console
Serves the HTTP API (/api/v1/...) and the page (/) on CONSOLE_ADDR.
environment:
  CONSOLE_ADDR      listen address (default 127.0.0.1:8780)
  CONSOLE_TOKENS    file of "TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]]"
                    lines, ROLE agent or approver, PATTERN a glob over the
                    session ids the token may use (default every session);
                    without it, one approver token is generated and printed
                    with a one-time sign-in link for the page
  CONSOLE_SIGNIN    a token NAME of CONSOLE_TOKENS: print a one-time sign-in
                    link for it at start (it works once, for an hour)
  CONSOLE_TLS_CERT, CONSOLE_TLS_KEY   serve HTTPS with this certificate
  CONSOLE_URL       the console's URL as people reach it (default the listen
                    address): MCP sign-ins send the browser back to it; when
                    https, CONSOLE_URL/client-metadata.json is the console's
                    OAuth client ID where authorization servers take those
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TASK_QUEUE, REDIS_URL,
  TOOLROUND_SECRET_KEY[_FILE]         as for the worker and the starter
  TOOL_WORKER_TTL   as for the worker: a waiting call of a user tool shows
                    how many tool workers polled its queue within it
  NOTIFY_LINK_KEY[_FILE]              the key of signed links (N2), as for the workers
  CONSOLE_SESSION_KEY base64 of 32 bytes sealing the page's sign-ins into their
                    cookies and started MCP sign-ins into Redis; consoles that
                    share it share both (default: a key of this console's
                    own, sign-ins end with it)
  CONSOLE_SESSION_KEY_PREVIOUS, NOTIFY_LINK_KEY_PREVIOUS, TOOLROUND_SECRET_KEY_PREVIOUS
                    during a key rotation, the key being rotated out: what it
                    sealed or signed is still accepted, nothing new uses it
  CONSOLE_REPLICAS  how many consoles serve one address; above 1 the console
                    refuses to start without CONSOLE_TOKENS,
                    CONSOLE_SESSION_KEY, NOTIFY_LINK_KEY and Redis
  HTTP_DENY_PRIVATE as for the worker: MCP sign-ins reach no private address
  MCP_GATEWAY_TOOLS comma-separated built-ins the MCP gateway (/api/v1/mcp)
                    lists (default the read-only ones, edit_file and
                    run_command); user tools and MCP servers' are always listed
  MCP_GATEWAY_APPROVE elicitation: the person at the MCP client of an agent token
                    marked approve=elicitation in CONSOLE_TOKENS approves or
                    denies its plain approval waits through a form
  MCP_GATEWAY_ISSUER  an OAuth 2.1 authorization server whose access tokens the
                    gateway takes beside CONSOLE_TOKENS (metadata and keys
                    fetched through the network guard)
  MCP_GATEWAY_AUDIENCE  the audience those tokens must name (default the
                    gateway's URL, CONSOLE_URL + /api/v1/mcp)
  MCP_GATEWAY_SCOPES  scopes every such token needs (space- or comma-separated)
  MCP_GATEWAY_SESSIONS_CLAIM  the claim listing a token's session patterns
                    (default toolround_sessions; a token without it: 403)
  TOOLS_WORKDIR     the workers' folder of workspaces (WORKSPACE=session), for
                    /api/v1/workspaces; unset: those answer 501`

func main() {
	if len(os.Args) > 1 {
		fmt.Println(usage)
		if a := os.Args[1]; a == "-h" || a == "--help" || a == "help" {
			return
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "console: "+err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		return err
	}
	tokens, generated, err := loadTokens()
	if err != nil {
		return err
	}
	tc, err := engine.Dial(cfg, logger)
	if err != nil {
		return err
	}
	defer tc.Close()
	var rc *cache.Client
	if cfg.RedisURL != "" {
		rc, err = cache.Open(ctx, cache.Options{URL: cfg.RedisURL, Logger: logger})
		if err != nil {
			logger.Warn("console: no Redis: event streams and large results are unavailable", "err", err)
			rc = nil
		} else {
			defer rc.Close()
		}
	}
	backend := console.NewTemporalBackend(tc, console.TemporalOptions{
		Namespace: cfg.Namespace, TaskQueue: cfg.TaskQueue, Redis: rc, Secrets: cfg.Secrets, Logger: logger,
		ToolWorkerTTL: cfg.ToolWorkerTTL,
	})
	linkKey, err := notify.LinkKeyConfigFromEnv().LoadKey()
	if err != nil {
		return fmt.Errorf("the key that verifies signed links: %w", err)
	}
	linkKeyPrevious, err := notify.LinkKeyConfigFromEnv().LoadPrevious()
	if err != nil {
		return fmt.Errorf("the previous key of signed links: %w", err)
	}
	opts := console.Options{Backend: backend, Tokens: tokens, Logger: logger, LinkKey: linkKey, LinkKeyPrevious: linkKeyPrevious,
		Workdir: strings.TrimSpace(os.Getenv("TOOLS_WORKDIR")), Placement: cfg.Placement}
	opts.Health.Temporal = func(ctx context.Context) error {
		_, err := tc.CheckHealth(ctx, &tclient.CheckHealthRequest{})
		return err
	}
	if rc != nil {
		opts.Health.Redis = func(ctx context.Context) error { return rc.Redis().Ping(ctx).Err() }
		opts.Revocations = console.RedisRevocations{RDB: rc.Redis()}
		opts.MCPSignIns = console.RedisMCPSignIns{RDB: rc.Redis()}
	}
	if opts.SessionKeyPrevious, err = sessionKeyFrom("CONSOLE_SESSION_KEY_PREVIOUS"); err != nil {
		return err
	}
	if opts.SessionKeyPrevious != nil && os.Getenv("CONSOLE_SESSION_KEY") == "" {
		return errors.New("CONSOLE_SESSION_KEY_PREVIOUS without CONSOLE_SESSION_KEY: set the new key beside the one being rotated out")
	}
	if opts.SessionKey, err = sessionKey(); err != nil {
		return err
	}
	if err := replicasReady(tokens, generated, opts.SessionKey, rc); err != nil {
		return err
	}
	if opts.MCP, err = mcpGrants(cfg, rc); err != nil {
		logger.Warn("console: the MCP page cannot sign servers in", "err", err)
	}
	if cfg.DenyPrivate {
		p := netguard.DefaultPolicy()
		p.DenyPrivate = true
		opts.MCPNetPolicy = &p
	}
	addr := os.Getenv("CONSOLE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8780"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on CONSOLE_ADDR %s: %w", addr, err)
	}
	defer func() { _ = ln.Close() }()
	certFile, keyFile := os.Getenv("CONSOLE_TLS_CERT"), os.Getenv("CONSOLE_TLS_KEY")
	scheme := "http"
	if certFile != "" || keyFile != "" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/", scheme, ln.Addr())
	// The console's own URL, for the MCP sign-in's redirect_uri: never a
	// request's Host header.
	opts.BaseURL = strings.TrimSpace(os.Getenv("CONSOLE_URL"))
	if opts.BaseURL == "" {
		opts.BaseURL = url
	}
	if v := strings.TrimSpace(os.Getenv("MCP_GATEWAY_TOOLS")); v != "" {
		opts.Gateway.Tools = []string{}
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				opts.Gateway.Tools = append(opts.Gateway.Tools, n)
			}
		}
	}
	switch v := strings.TrimSpace(os.Getenv("MCP_GATEWAY_APPROVE")); v {
	case "", "elicitation":
		opts.Gateway.Approve = v
	default:
		return fmt.Errorf("MCP_GATEWAY_APPROVE=%q: the one value is elicitation (or leave it unset)", v)
	}
	opts.Gateway.OAuth = console.GatewayOAuth{
		Issuer:        strings.TrimSpace(os.Getenv("MCP_GATEWAY_ISSUER")),
		Audience:      strings.TrimSpace(os.Getenv("MCP_GATEWAY_AUDIENCE")),
		Scopes:        strings.FieldsFunc(os.Getenv("MCP_GATEWAY_SCOPES"), func(r rune) bool { return r == ',' || r == ' ' }),
		SessionsClaim: strings.TrimSpace(os.Getenv("MCP_GATEWAY_SESSIONS_CLAIM")),
		Net:           opts.MCPNetPolicy,
	}
	srv, err := console.New(opts)
	if err != nil {
		return err
	}
	if generated != "" {
		fmt.Printf("console listening on %s token %s (approver \"console\"; set CONSOLE_TOKENS to choose tokens)\n", url, generated)
	} else {
		fmt.Printf("console listening on %s (%d tokens from %s)\n", url, len(tokens), os.Getenv("CONSOLE_TOKENS"))
	}
	if name := signInName(generated); name != "" {
		link, err := srv.SignInLink(name, 0)
		if err != nil {
			return fmt.Errorf("CONSOLE_SIGNIN: %w", err)
		}
		fmt.Printf("console sign-in link %s (signs in once as %q, for %s)\n", link, name, console.SignInLinkTTL)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() {
		if scheme == "https" {
			errc <- hs.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// mcpGrants are the workers' MCP sign-ins (E3), sealed in Redis with the
// secret key: nil without Redis.
func mcpGrants(cfg engine.Config, rc *cache.Client) (*mcp.Grants, error) {
	if rc == nil {
		return nil, errors.New("no Redis")
	}
	key, err := cfg.Secrets.LoadKey()
	if err != nil {
		return nil, fmt.Errorf("the secret key: %w", err)
	}
	return mcp.NewGrants(rc.SessionData(), key)
}

// signInName is the token a one-time sign-in link is printed for:
// CONSOLE_SIGNIN, else the generated one's.
func signInName(generated string) string {
	if n := strings.TrimSpace(os.Getenv("CONSOLE_SIGNIN")); n != "" {
		return n
	}
	if generated != "" {
		return "console"
	}
	return ""
}

// loadTokens reads CONSOLE_TOKENS, or makes one approver token.
func loadTokens() ([]console.Token, string, error) {
	path := os.Getenv("CONSOLE_TOKENS")
	if path == "" {
		t := console.NewToken()
		return []console.Token{{Secret: t, Name: "console", Role: console.RoleApprover}}, t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("CONSOLE_TOKENS: %w", err)
	}
	defer f.Close()
	ts, err := console.ParseTokens(f)
	if err != nil {
		return nil, "", fmt.Errorf("CONSOLE_TOKENS %s: %w", path, err)
	}
	return ts, "", nil
}

// sessionKey is CONSOLE_SESSION_KEY (base64 of 32 bytes, O3), nil when
// unset: the console then seals sign-ins with a key of its own.
func sessionKey() ([]byte, error) { return sessionKeyFrom("CONSOLE_SESSION_KEY") }

// sessionKeyFrom reads a session key from the variable name, nil when
// unset. CONSOLE_SESSION_KEY_PREVIOUS is the key being rotated out: the
// sign-ins it sealed go on, new ones are sealed with CONSOLE_SESSION_KEY.
func sessionKeyFrom(name string) ([]byte, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return nil, nil
	}
	k, err := keyfile.Decode(v)
	if err != nil || len(k) != console.SessionKeySize {
		return nil, fmt.Errorf("%s: want base64 of %d bytes (openssl rand -base64 32)", name, console.SessionKeySize)
	}
	return k, nil
}

// replicasReady refuses to start one of several consoles (CONSOLE_REPLICAS
// > 1, O3) that would keep something of its own: generated tokens, a
// session key, a link key from a key file, or sign-outs without Redis.
func replicasReady(tokens []console.Token, generated string, key []byte, rc *cache.Client) error {
	v := strings.TrimSpace(os.Getenv("CONSOLE_REPLICAS"))
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("CONSOLE_REPLICAS=%q: want a number of consoles, 1 or more", v)
	}
	if n == 1 {
		return nil
	}
	var missing []string
	if generated != "" || len(tokens) == 0 {
		missing = append(missing, "CONSOLE_TOKENS")
	}
	if key == nil {
		missing = append(missing, "CONSOLE_SESSION_KEY")
	}
	if strings.TrimSpace(os.Getenv("NOTIFY_LINK_KEY")) == "" {
		missing = append(missing, "NOTIFY_LINK_KEY")
	}
	if len(missing) > 0 {
		return fmt.Errorf("CONSOLE_REPLICAS=%d: every console must share %s from the environment; none is generated", n, strings.Join(missing, ", "))
	}
	if rc == nil {
		return fmt.Errorf("CONSOLE_REPLICAS=%d: the consoles need Redis (REDIS_URL) to share sign-outs", n)
	}
	return nil
}
