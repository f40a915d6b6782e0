package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolround/toolround/tools/mcp"
)

// Signing MCP servers in (E3). The workers list the servers that answer
// 401 as needing a sign-in (mcp.Grants); /mcp shows them. An approver
// whose token covers every session starts a sign-in: the console runs the
// OAuth client (discovery, registration, PKCE), gives the person the
// authorization URL as a link, takes the authorization server's redirect
// at /mcp/callback, and keeps the grant sealed for the workers. The
// redirect carries no console cookie (it comes from another site); the
// state of a flow this console started, unguessable and used once, is
// what lets it in.

// signInWindow is how long a started sign-in waits for its redirect.
const signInWindow = 10 * time.Minute

// signIns are the sign-ins waiting for their redirect, by OAuth state.
type signIns struct {
	mu    sync.Mutex
	flows map[string]*signInFlow
}

type signInFlow struct {
	server string
	// cancel ends the flow's client, which may be waiting on the server.
	cancel context.CancelFunc
	reply  chan signInReply
	done   chan error
}

// signInReply is what the redirect brought: a code, or the refusal.
type signInReply struct {
	res mcp.SignInResult
	err error
}

func (f *signIns) add(state string, fl *signInFlow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flows == nil {
		f.flows = map[string]*signInFlow{}
	}
	f.flows[state] = fl
}

// drop removes fl, which ended without its redirect.
func (f *signIns) drop(fl *signInFlow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for state, x := range f.flows {
		if x == fl {
			delete(f.flows, state)
		}
	}
}

// take removes and returns the flow of state: a redirect is used once.
func (f *signIns) take(state string) (*signInFlow, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.flows[state]
	delete(f.flows, state)
	return fl, ok
}

type mcpData struct {
	pageData
	Needs []mcpNeed
	// Unavailable says why the page lists nothing it could.
	Unavailable string
	CanSignIn   bool
	// AuthURL and AuthHost are the next step of a started sign-in.
	Server, AuthURL, AuthHost string
	// Signed names a server just signed in.
	Signed string
}

type mcpNeed struct {
	Server, URL, Why, Since string
	Scopes                  []string
}

// mayManageMCP: signing a server in gives every worker, and so every
// session, its tools; only an approver whose token covers every session
// may.
func mayManageMCP(p principal) bool { return p.Role == RoleApprover && p.Scope == nil }

func (s *Server) mcpPage(w http.ResponseWriter, r *http.Request, p principal) {
	d := mcpData{pageData: s.base(p, "MCP servers", "/mcp"), CanSignIn: mayManageMCP(p)}
	if s.opts.MCP == nil {
		d.Unavailable = "This console has no Redis or no secret key, so it cannot see the workers' MCP sign-ins."
		s.render(w, http.StatusOK, "mcp", d)
		return
	}
	needs, err := s.opts.MCP.Needs(r.Context())
	if err != nil {
		s.log.Error("console: list MCP sign-ins", "err", err)
		d.Unavailable = "The workers' MCP sign-ins could not be read."
	}
	for _, n := range needs {
		d.Needs = append(d.Needs, mcpNeed{Server: n.Server, URL: n.URL, Why: n.Why, Scopes: n.Scopes,
			Since: n.Since.UTC().Format(time.RFC3339)})
	}
	d.Signed = r.URL.Query().Get("signed")
	s.render(w, http.StatusOK, "mcp", d)
}

// mcpSignIn starts the sign-in of a server and shows the person the
// authorization server's URL.
func (s *Server) mcpSignIn(w http.ResponseWriter, r *http.Request, p principal) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	_ = r.ParseForm()
	if !csrfOK(p, r) {
		s.errorPage(w, r, http.StatusForbidden, "forbidden", "The form's CSRF token is missing or stale; reload the page.")
		return
	}
	if !mayManageMCP(p) {
		s.errorPage(w, r, http.StatusForbidden, "forbidden", "Signing an MCP server in takes an approver token that covers every session.")
		return
	}
	if s.opts.MCP == nil {
		s.errorPage(w, r, http.StatusNotImplemented, "unavailable", "This console cannot see the workers' MCP sign-ins.")
		return
	}
	name := r.PathValue("server")
	need, ok, err := s.opts.MCP.Need(r.Context(), name)
	if err != nil || !ok {
		s.errorPage(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("No worker asks for a sign-in to MCP server %q.", name))
		return
	}
	if s.opts.BaseURL == "" {
		s.errorPage(w, r, http.StatusNotImplemented, "unavailable", "This console does not know its own URL, which the sign-in sends people back to: set CONSOLE_URL.")
		return
	}
	// The console's own URL, never the request's Host header: whoever
	// sends the request chooses that, and with it where the code goes.
	redirect := s.opts.BaseURL + "/mcp/callback"
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), signInWindow)
	fl := &signInFlow{server: name, cancel: cancel, reply: make(chan signInReply, 1), done: make(chan error, 1)}
	authURL := make(chan string, 1)
	var asked atomic.Bool
	go func() {
		defer cancel()
		gr, err := mcp.SignIn(ctx, need, mcp.SignInOptions{RedirectURL: redirect, NetPolicy: s.opts.MCPNetPolicy, By: p.Name,
			Person: func(ctx context.Context, req mcp.SignInRequest) (mcp.SignInResult, error) {
				// One person, one redirect: the client may ask again
				// for another request after a refusal.
				if asked.Swap(true) {
					return mcp.SignInResult{}, errors.New("the sign-in was asked for once already")
				}
				authURL <- req.URL
				select {
				case rep := <-fl.reply:
					return rep.res, rep.err
				case <-ctx.Done():
					return mcp.SignInResult{}, errors.New("nobody came back from the authorization server in time")
				}
			}})
		if err == nil {
			err = s.opts.MCP.PutGrant(ctx, gr)
		}
		if err != nil {
			s.log.Warn("console: MCP sign-in failed", "server", name, "err", err)
		}
		s.flows.drop(fl)
		fl.done <- err
	}()
	select {
	case u := <-authURL:
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Query().Get("state") == "" {
			cancel()
			s.errorPage(w, r, http.StatusBadGateway, "bad_authorization_url", "The authorization server's URL is not an http(s) URL with a state.")
			return
		}
		s.flows.add(pu.Query().Get("state"), fl)
		s.log.Info("console: MCP sign-in started", "server", name, "by", p.Name, "authorization_host", pu.Host)
		d := mcpData{pageData: s.base(p, "Sign in to "+name, "/mcp"), CanSignIn: true, Server: name, AuthURL: u, AuthHost: pu.Host}
		s.render(w, http.StatusOK, "mcp", d)
	case err := <-fl.done:
		msg := "The server did not ask for a sign-in."
		if err != nil {
			msg = err.Error()
		}
		s.errorPage(w, r, http.StatusBadGateway, "sign_in_failed", msg)
	case <-time.After(mcp.DefaultConnectTimeout):
		cancel()
		s.errorPage(w, r, http.StatusGatewayTimeout, "sign_in_failed", "The server's authorization server did not answer in time.")
	}
}

// mcpCallback takes the authorization server's redirect, finishes the
// exchange and keeps the grant.
func (s *Server) mcpCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fl, ok := s.flows.take(q.Get("state"))
	if q.Get("state") == "" || !ok {
		s.errorPage(w, r, http.StatusBadRequest, "unknown_state", "This sign-in is not one this console started, or it was used already; start it again from the MCP page.")
		return
	}
	if e := q.Get("error"); e != "" {
		fl.reply <- signInReply{err: fmt.Errorf("the authorization server answered %s", e)}
		fl.cancel()
		s.errorPage(w, r, http.StatusBadRequest, "sign_in_refused", "The authorization server answered "+e+"; nothing was signed in.")
		return
	}
	fl.reply <- signInReply{res: mcp.SignInResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
	select {
	case err := <-fl.done:
		if err != nil {
			s.errorPage(w, r, http.StatusBadGateway, "sign_in_failed", err.Error())
			return
		}
	case <-time.After(2 * mcp.DefaultConnectTimeout):
		s.errorPage(w, r, http.StatusGatewayTimeout, "sign_in_failed", "The token exchange did not finish in time.")
		return
	}
	s.log.Info("console: MCP server signed in", "server", fl.server)
	http.Redirect(w, r, "/mcp?signed="+url.QueryEscape(fl.server), http.StatusSeeOther)
}
