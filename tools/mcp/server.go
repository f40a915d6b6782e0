package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/procgroup"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// One server's connection: its session, started and restarted as needed,
// the process of a stdio server, and the calls of its tools.

// server is one configured MCP server and its current session.
type server struct {
	cfg  ServerConfig
	opts Config
	log  *slog.Logger
	// quota is the workspace the server is rooted in, whose
	// WORKSPACE_MAX_BYTES it keeps to (Config.Quota); nil: none.
	quota  *tools.Workdir
	client *sdk.Client
	http   *http.Client // streamable HTTP servers only
	// oauth signs the worker in to a server behind OAuth and keeps its
	// tokens (oauth.go), or sends the console's grant (grants.go); nil
	// without Config.SignIn or Config.Grants. oauthErr is why it
	// could not be made.
	oauth    auth.OAuthHandler
	oauthErr error

	// progress maps the progress token of each call in flight to the
	// call's ReportProgress.
	progress  sync.Map
	nextToken atomic.Int64

	mu       sync.Mutex
	sess     *sdk.ClientSession
	proc     serverProc
	connects int
	closed   bool
	startErr error
	tools    []*sdk.Tool
	// resources: the server declared resources when it started, and
	// readTool is the name of the tool that reads them (resources.go).
	resources bool
	readTool  string
	// listed is called after a re-list found the tools changed; the
	// manager sets it to register the new ones.
	listed func(*server)
	// calls are the calls in flight, for elicitation (elicit.go).
	calls map[*inflight]struct{}
	// conn is the live stdio connection, through the wire tap; taskSupport
	// each tool's execution.taskSupport, by name (wiretap.go).
	conn        *tapConn
	taskSupport sync.Map
	// listTTL is the last tool list's ttlMs, listedAt when it came
	// (unix nanoseconds); relisting is set while a re-list runs (lists.go).
	listTTL   atomic.Int64
	listedAt  atomic.Int64
	relisting atomic.Bool
}

func newServer(sc ServerConfig, cfg Config) *server {
	log := cfg.Logger.With("mcp_server", sc.Name)
	s := &server{cfg: sc, opts: cfg, log: log}
	if cfg.Quota != nil && sc.stdio() {
		root := sc.Cwd
		if root == "" {
			root = cfg.Dir
		}
		if root, err := filepath.Abs(root); err == nil && within(cfg.Quota.Dir(), root) {
			s.quota = cfg.Quota
		}
	}
	s.client = sdk.NewClient(clientInfo, &sdk.ClientOptions{
		Logger:                      log,
		ProgressNotificationHandler: s.onProgress,
		ElicitationHandler:          s.onElicit,
		// A server that adds tools says so; the worker lists them again
		// and registers the new ones (lists.go).
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.relist() },
		// A 2026-07-28 server's input requests go to the call's round,
		// which answers them durably (E1), not to the SDK's own loop.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		//lint:ignore SA1019 roots are still asked for during their deprecation window
		Capabilities: &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true}, Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}},
	})
	if !sc.stdio() {
		base := http.DefaultTransport.(*http.Transport).Clone()
		s.http = &http.Client{Transport: &headerTransport{base: base, cfg: sc, tap: &tap{s: s}}}
		s.oauth, s.oauthErr = s.oauthHandler()
	}
	return s
}

// start opens the first session and lists the tools.
func (s *server) start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := func() error {
		sess, err := s.connectLocked(ctx)
		if err != nil {
			return err
		}
		list, err := s.list(ctx, sess)
		if err != nil {
			return err
		}
		s.tools, s.resources = list, offersResources(sess)
		return nil
	}()
	s.startErr = err
	if err != nil {
		if s.sess != nil {
			sess, proc := s.sess, s.proc
			s.sess, s.proc = nil, serverProc{}
			go func() {
				_ = sess.Close()
				proc.end()
			}()
		}
	}
	return err
}

// serverProc is a stdio server's process tree: the server's pid, and the
// tree (a reaper runs the server in a process group of its own), which ends
// with the server, with end, and with the worker, every process the server
// started included, setsid or not (T8).
type serverProc struct {
	pid  int
	tree *procgroup.Tree
}

// end kills the server and every process it started.
func (p serverProc) end() {
	if p.tree != nil {
		p.tree.End()
		return
	}
	procgroup.Kill(p.pid)
}

// startTransport starts a stdio server on procgroup's starter thread, so
// that it gets none of the worker's descriptors and its parent-death signal
// fires when the worker dies. Its connection goes through the wire tap.
type startTransport struct {
	sdk.Transport
	tap *tapConn
}

func (t startTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	var conn sdk.Connection
	err := procgroup.Start(func() (err error) {
		conn, err = t.Transport.Connect(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	t.tap.Connection = conn
	return t.tap, nil
}

// connectLocked opens a session; s.mu is held.
func (s *server) connectLocked(ctx context.Context) (*sdk.ClientSession, error) {
	if s.closed {
		return nil, errors.New("the connection manager is closed")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	var (
		transport sdk.Transport
		cmd       *exec.Cmd
		stderr    *stderrLog
		tc        *tapConn
		tree      *procgroup.Tree
	)
	if s.cfg.stdio() {
		env, err := s.cfg.environ()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = env
		cmd.Dir = s.cfg.Cwd
		if cmd.Dir == "" {
			cmd.Dir = s.opts.Dir
		}
		stderr = &stderrLog{log: s.log}
		cmd.Stderr = stderr
		// A server rooted in a workspace under WORKSPACE_MAX_BYTES writes
		// no file past the room it had left when it started (W3).
		var opts procgroup.TreeOptions
		if s.quota != nil {
			room, limited, err := s.quota.Room()
			if err != nil {
				return nil, err
			}
			opts.FileSize, opts.LimitFileSize = room, limited
		}
		if tree, err = procgroup.Contain(cmd, opts); err != nil {
			return nil, fmt.Errorf("start %q: %w", s.cfg.Command, err)
		}
		tc = newTapConn(s, connID())
		transport = startTransport{Transport: &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, tap: tc}
	} else {
		if _, err := s.cfg.headers(); err != nil {
			return nil, err
		}
		if s.oauthErr != nil {
			return nil, s.oauthErr
		}
		t := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http}
		if s.oauth != nil {
			t.OAuthHandler = s.oauth
		}
		transport = t
	}
	sess, err := s.client.Connect(ctx, transport, nil)
	proc := serverProc{tree: tree}
	if cmd != nil && cmd.Process != nil {
		tree.Started(cmd.Process.Pid)
		proc.pid = tree.Pid()
	}
	if err != nil {
		proc.end()
		if cmd != nil && cmd.Process == nil {
			return nil, fmt.Errorf("start %q: %w", s.cfg.Command, err)
		}
		if stderr != nil {
			if tail := stderr.Tail(); tail != "" {
				return nil, fmt.Errorf("handshake: %w; the server's stderr ends with: %s", err, tail)
			}
		}
		if ht, ok := s.httpTransport(); ok && s.oauth == nil && ht.challenged.Load() {
			return nil, fmt.Errorf("%w: it answers 401 with a Bearer challenge, and this worker has no way to sign in (handshake: %v)", ErrNeedsSignIn, err)
		}
		return nil, fmt.Errorf("handshake: %w", err)
	}
	s.sess, s.proc = sess, proc
	if tc != nil {
		s.conn = tc
	}
	s.connects++
	go s.watch(sess, proc)
	return sess, nil
}

// watch forgets a session once it ends (the server exited or the HTTP
// session broke), so that the next call reconnects before it sends anything.
func (s *server) watch(sess *sdk.ClientSession, proc serverProc) {
	err := sess.Wait()
	proc.end()
	s.mu.Lock()
	current := s.sess == sess
	if current {
		s.sess, s.proc = nil, serverProc{}
	}
	closed := s.closed
	s.mu.Unlock()
	if current && !closed {
		s.log.Warn("mcp: server disconnected; the next call reconnects", "err", err)
	}
}

// session returns the live session, or opens one; fresh reports the latter.
func (s *server) session(ctx context.Context) (sess *sdk.ClientSession, fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		return s.sess, false, nil
	}
	sess, err = s.connectLocked(ctx)
	if err != nil {
		return nil, false, err
	}
	s.log.Info("mcp: server reconnected")
	return sess, true, nil
}

// drop forgets a session that failed a call and closes it.
func (s *server) drop(sess *sdk.ClientSession) {
	proc := s.forget(sess)
	go func() {
		_ = sess.Close()
		proc.end()
	}()
}

// abandon forgets the session of a call that timed out and kills the
// server's process group at once: a server that does not answer is not
// asked to shut down.
func (s *server) abandon(sess *sdk.ClientSession) {
	s.forget(sess).end()
	go func() { _ = sess.Close() }()
}

// forget clears sess if it is the current session and returns its process.
func (s *server) forget(sess *sdk.ClientSession) serverProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		return serverProc{}
	}
	proc := s.proc
	s.sess, s.proc = nil, serverProc{}
	return proc
}

func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	sess, proc := s.sess, s.proc
	s.sess, s.proc = nil, serverProc{}
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	err := sess.Close()
	proc.end()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		// A server that exits with an error or a signal once its stdin
		// closes has still stopped.
		return nil
	}
	return err
}

// errUnreachable marks a call that could not reach its server: nothing ran.
var errUnreachable = errors.New("mcp server unreachable")

// callTool runs one call. A session that ended before the call is replaced
// first. A connection that fails during the call is reconnected once and
// the call sent again when that cannot run it twice: the request never left
// (the connection was already closed, the HTTP session was gone, the
// connection was refused) or the tool is read-only. Otherwise its outcome is
// unknown and it is not repeated (P2.4).
func (s *server) callTool(ctx context.Context, tool string, readOnly bool, args json.RawMessage, operationID string, input *resume) (*sdk.CallToolResult, error) {
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if input != nil {
		params.InputResponses, params.RequestState = input.responses, input.state
	}
	if operationID != "" {
		// The server may use it to recognise a repeated call (SPEC R).
		params.Meta = sdk.Meta{round.OperationMetaKey: operationID}
	}
	token := fmt.Sprintf("%s-%d", s.cfg.Name, s.nextToken.Add(1))
	params.SetProgressToken(token)
	s.progress.Store(token, func(details string) { tools.ReportProgress(ctx, details) })
	defer s.progress.Delete(token)
	sess, fresh, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreachable, err)
	}
	res, err := sess.CallTool(ctx, params)
	if err != nil && s.timedOut(ctx, sess) {
		return nil, errTimedOut
	}
	if err == nil || ctx.Err() != nil || !connectionFailed(err) {
		return res, err
	}
	s.drop(sess)
	if fresh || (!readOnly && !notSent(err)) {
		return nil, &lostError{err: err, unsent: notSent(err)}
	}
	sess, _, rerr := s.session(ctx)
	if rerr != nil {
		return nil, fmt.Errorf("%w: connection lost (%v), reconnect failed: %w", errUnreachable, err, rerr)
	}
	res, err = sess.CallTool(ctx, params)
	if err != nil && s.timedOut(ctx, sess) {
		return nil, errTimedOut
	}
	if err != nil && ctx.Err() == nil && connectionFailed(err) {
		s.drop(sess)
		return nil, &lostError{err: err, unsent: notSent(err)}
	}
	return res, err
}

// errTimedOut marks a call that got no answer within its timeout.
var errTimedOut = errors.New("no answer within the timeout")

// timedOut reports whether the call's deadline passed; a stdio server that
// has not answered by then is abandoned (its process group killed), so that
// it neither hangs on nor serves the next call half-stuck: that call starts
// it again.
func (s *server) timedOut(ctx context.Context, sess *sdk.ClientSession) bool {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false
	}
	if s.cfg.stdio() {
		s.abandon(sess)
	}
	return true
}

// onProgress passes a server's progress notification on to the call it
// is about.
func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	report, ok := s.progress.Load(token)
	if !ok {
		return
	}
	details := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		details += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		details += ": " + p.Message
	}
	report.(func(string))(details)
}

// lostError is a connection that failed during a call.
type lostError struct {
	err    error
	unsent bool
}

func (e *lostError) Error() string {
	if e.unsent {
		return fmt.Sprintf("the connection to the server failed and the call was not sent: %v", e.err)
	}
	return fmt.Sprintf("the connection to the server was lost during the call, so it may or may not have run; check its effect before calling it again: %v", e.err)
}

func (e *lostError) Unwrap() error { return e.err }

// notSent reports failures that happen before a request reaches the server.
func notSent(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, syscall.ECONNREFUSED)
}

// codeRejected is the code the SDK gives an HTTP request that failed in the
// transport (no response, or a response that is not JSON-RPC).
const codeRejected = -32005

// connectionFailed tells a broken connection from an error the server
// answered with (an unknown tool, invalid arguments).
func connectionFailed(err error) bool {
	if notSent(err) {
		return true
	}
	var wire *jsonrpc.Error
	return !errors.As(err, &wire) || wire.Code == codeRejected
}

// handler calls tool with its own deadline, timeout, which falls before the
// activity's (the definition adds callGrace), so that a server that does
// not answer gets a result naming it, not an activity timeout that blames
// the worker.
func (s *server) handler(tool string, readOnly bool, maxOutput int, timeout time.Duration) tools.Handler {
	h := s.call(tool, readOnly, maxOutput, timeout)
	if s.quota == nil {
		return h
	}
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		res, err := h(ctx, req)
		return s.keepToQuota(tool, res, err)
	}
}

// keepToQuota turns the outcome of a call that left the server's workspace
// over WORKSPACE_MAX_BYTES into workspace_full (W3), as for run_command: the
// files stay, and later writes are refused until the workspace is under
// the limit. A call that waits for input or runs as a task has not ended.
func (s *server) keepToQuota(tool string, res tools.Result, err error) (tools.Result, error) {
	if res.Input != nil || res.Task != nil || s.quota.MaxBytes() <= 0 {
		return res, err
	}
	used, uerr := s.quota.Usage()
	if uerr != nil || used <= s.quota.MaxBytes() {
		return res, err
	}
	what := res.Content
	if err != nil {
		what = err.Error()
	}
	return tools.Result{}, tools.WithCode(tools.CodeWorkspaceFull, fmt.Errorf("mcp server %q, tool %q: the call left the workspace over its limit: it holds %d bytes and %s is %d; its files stay, and writes are refused until files are removed; the call's outcome: %s",
		s.cfg.Name, tool, used, tools.EnvWorkspaceMaxBytes, s.quota.MaxBytes(), what))
}

// call is the handler of tool, before the workspace's limit.
func (s *server) call(tool string, readOnly bool, maxOutput int, timeout time.Duration) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		args := req.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		s.relistIfStale()
		if req.Task != nil {
			// The server runs the call as a task (E2): poll it.
			return s.continueTask(ctx, req, tool, maxOutput)
		}
		callCtx := newCallClock(ctx, timeout)
		defer callCtx.release()
		defer s.begin(ctx, callCtx)()
		input, err := resumeOf(req)
		if err != nil {
			return tools.Result{}, fmt.Errorf("mcp server %q, tool %q: %w", s.cfg.Name, tool, err)
		}
		slot := &taskSlot{}
		sent := withTaskSlot(callCtx, slot)
		res, err := s.callTool(sent, tool, readOnly, args, req.OperationID, input)
		for trips := req.InputTrips; err == nil && res.NeedsInput(); trips++ {
			// A 2026-07-28 server asks for input first (E1).
			var handOff *round.InputRequired
			if input, handOff, err = s.inputFor(callCtx, res, trips); err != nil || handOff != nil {
				if handOff != nil {
					return tools.Result{Input: handOff}, nil
				}
				break
			}
			res, err = s.callTool(sent, tool, readOnly, args, req.OperationID, input)
		}
		if t, conn := slot.get(); err == nil && t != nil {
			// The server made a task (E2). A round keeps it in history
			// and polls it in an activity of its own; elsewhere the call
			// polls it now.
			s.mu.Lock()
			sess := s.sess
			s.mu.Unlock()
			if len(t.TaskID) > maxTaskID {
				return tools.Result{}, fmt.Errorf("mcp server %q, tool %q: the server made a task whose id is %d bytes, more than %d", s.cfg.Name, tool, len(t.TaskID), maxTaskID)
			}
			h := s.handleOf(t, conn, sess)
			s.log.Info("mcp: the server runs the call as a task", "tool", tool, "task", h.ID)
			if tools.InputRounds(ctx) {
				return tools.Result{Task: h}, nil
			}
			var hand *round.InputRequired
			if res, hand, err = s.pollTask(callCtx, h, map[string]bool{}, req.InputTrips); err == nil && hand != nil {
				err = errors.New("the task asks for input that only a round can give")
			}
			if err != nil {
				return tools.Result{}, s.taskError(h, tool, err)
			}
		}
		if err != nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			// Its own deadline passed, whatever step it was in: the
			// handshake of a server started again hangs as a call does.
			err = errTimedOut
		}
		if errors.Is(err, errTimedOut) && ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("mcp server %q, tool %q: the call ended before the server answered: %w", s.cfg.Name, tool, ctx.Err())
		}
		if errors.Is(err, errTimedOut) {
			what := "the call was abandoned"
			if s.cfg.stdio() {
				what = "its process group was killed, and the next call starts it again"
			}
			return tools.Result{}, fmt.Errorf("mcp server %q, tool %q: the server did not answer within its timeout of %s (timeout_seconds of its MCP_CONFIG entry, else the default); %s",
				s.cfg.Name, tool, timeout, what)
		}
		if err != nil {
			err = fmt.Errorf("mcp server %q, tool %q: %w", s.cfg.Name, tool, err)
			var lost *lostError
			if readOnly && ctx.Err() == nil && (errors.Is(err, errUnreachable) || errors.As(err, &lost)) {
				return tools.Result{}, tools.Transient(err)
			}
			return tools.Result{}, err
		}
		return s.resultOf(ctx, res, maxOutput, tool)
	}
}

// resultOf is a tool's result as the engine takes it.
func (s *server) resultOf(ctx context.Context, res *sdk.CallToolResult, maxOutput int, tool string) (tools.Result, error) {
	s.mu.Lock()
	readTool := s.readTool
	s.mu.Unlock()
	text := resultText(res, maxOutput, readTool, s.keeper(ctx))
	if res.IsError {
		if text == "" {
			text = "the tool reported an error without a message"
		}
		return tools.Result{}, fmt.Errorf("mcp server %q, tool %q: %s", s.cfg.Name, tool, text)
	}
	return tools.Result{Content: text, Images: resultImages(res)}, nil
}

// httpTransport is s's HTTP transport, for a streamable HTTP server.
func (s *server) httpTransport() (*headerTransport, bool) {
	if s.http == nil {
		return nil, false
	}
	ht, ok := s.http.Transport.(*headerTransport)
	return ht, ok
}

// headerTransport adds a server's configured headers to every request and
// notices a server that asks for OAuth.
type headerTransport struct {
	base http.RoundTripper
	cfg  ServerConfig
	// tap reads and adds what MCP tasks need (wiretap.go).
	tap *tap
	// challenged is set when the server answers 401 with a Bearer
	// challenge: it asks for OAuth (E3).
	challenged atomic.Bool
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.tap != nil {
		return t.tap.tapHTTP(req, t.send)
	}
	return t.send(req)
}

func (t *headerTransport) send(req *http.Request) (*http.Response, error) {
	if len(t.cfg.Headers) > 0 {
		h, err := t.cfg.headers()
		if err != nil {
			return nil, fmt.Errorf("mcp: server %q: %w", t.cfg.Name, err)
		}
		req = req.Clone(req.Context())
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && bearerChallenge(resp.Header.Values("WWW-Authenticate")) {
		t.challenged.Store(true)
	}
	return resp, err
}

// bearerChallenge reports whether a WWW-Authenticate header asks for a
// Bearer token.
func bearerChallenge(values []string) bool {
	for _, v := range values {
		if len(v) >= 6 && strings.EqualFold(v[:6], "bearer") {
			return true
		}
	}
	return false
}
