package mcp

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/toolround/toolround/internal/testtools/oauthmcp"
	"github.com/toolround/toolround/tools/secrets"
)

func newGrants(t *testing.T) (*Grants, *oauthmcp.MemHashes) {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	h := oauthmcp.NewMemHashes()
	g, err := NewGrants(h, key)
	require.NoError(t, err)
	return g, h
}

func TestServerSignedInThroughTheConsoleConnectsItsWorker(t *testing.T) {
	o := newOAuthServer(t)
	g, h := newGrants(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, Grants: g,
		SignInPoll: 20 * time.Millisecond, SignInLink: "https://console.example/mcp"})
	err := status(m, "locked").Err
	require.ErrorIs(t, err, ErrNeedsSignIn)
	require.ErrorContains(t, err, "https://console.example/mcp")
	require.Empty(t, reg.Names(), "no tools before the sign-in")
	needs, err := g.Needs(context.Background())
	require.NoError(t, err)
	require.Len(t, needs, 1)
	require.Equal(t, "locked", needs[0].Server)
	require.Equal(t, o.URL, needs[0].URL)
	require.Equal(t, []string{"tools"}, needs[0].Scopes, "the scope of the server's challenge")
	since := needs[0].Since
	require.NoError(t, g.NeedSignIn(context.Background(), SignInNeed{Server: "locked", URL: o.URL, Why: "again"}))
	again, _, err := g.Need(context.Background(), "locked")
	require.NoError(t, err)
	require.Equal(t, since, again.Since, "a need is dated from its first time")

	// The console's part: a person signs in, the grant is kept.
	var signIns atomic.Int64
	gr, err := SignIn(context.Background(), needs[0], SignInOptions{RedirectURL: "http://127.0.0.1:1/mcp/callback",
		Person: autoSignIn(&signIns), By: "alice"})
	require.NoError(t, err)
	require.Equal(t, int64(1), signIns.Load())
	require.Equal(t, "dyn-client", gr.ClientID, "registered dynamically")
	require.NotEmpty(t, gr.Token.RefreshToken)
	require.NoError(t, g.PutGrant(context.Background(), gr))

	require.Eventually(t, func() bool { _, ok := reg.Lookup("mcp_locked_echo"); return ok }, 10*time.Second, 20*time.Millisecond,
		"the worker connects the server once it is signed in")
	got, err := call(t, reg, "mcp_locked_echo", `{"text":"after the sign-in"}`)
	require.NoError(t, err)
	require.Equal(t, "after the sign-in", got)
	require.NoError(t, status(m, "locked").Err)
	needs, err = g.Needs(context.Background())
	require.NoError(t, err)
	require.Empty(t, needs, "the need is cleared by the grant")
	require.Equal(t, int64(1), o.Tokens.Load(), "the worker used the console's token")

	raw := h.Raw()
	require.NotContains(t, raw, gr.Token.AccessToken, "the token is sealed")
	require.NotContains(t, raw, gr.Token.RefreshToken)
	require.Contains(t, raw, secrets.SealedPrefix)
}

func TestGrantRefreshedByOneWorkerServesTheNext(t *testing.T) {
	o := newOAuthServer(t)
	g, _ := newGrants(t)
	need := SignInNeed{Server: "locked", URL: o.URL}
	gr, err := SignIn(context.Background(), need, SignInOptions{RedirectURL: "http://127.0.0.1:1/cb", Person: autoSignIn(new(atomic.Int64))})
	require.NoError(t, err)
	first := gr.Token.AccessToken
	gr.Token.Expiry = time.Now().Add(-time.Minute) // it has expired since
	require.NoError(t, g.PutGrant(context.Background(), gr))

	_, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, Grants: g})
	got, err := call(t, reg, "mcp_locked_echo", `{"text":"refreshed"}`)
	require.NoError(t, err)
	require.Equal(t, "refreshed", got)
	require.Equal(t, int64(1), o.Refreshed.Load(), "one refresh")
	kept, err := g.Grant(context.Background(), "locked", o.URL)
	require.NoError(t, err)
	require.NotEqual(t, first, kept.Token.AccessToken, "the refreshed token is written back")
	require.True(t, kept.Token.Valid())

	// Another worker reads the refreshed token; the rotated refresh token
	// is not spent twice.
	_, reg2 := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, Grants: g})
	got, err = call(t, reg2, "mcp_locked_add", `{"a":2,"b":3}`)
	require.NoError(t, err)
	require.Equal(t, "5", got)
	require.Equal(t, int64(1), o.Refreshed.Load(), "no second refresh")
}

func TestRevokedGrantAsksForANewSignIn(t *testing.T) {
	o := newOAuthServer(t)
	g, _ := newGrants(t)
	gr, err := SignIn(context.Background(), SignInNeed{Server: "locked", URL: o.URL},
		SignInOptions{RedirectURL: "http://127.0.0.1:1/cb", Person: autoSignIn(new(atomic.Int64))})
	require.NoError(t, err)
	require.NoError(t, g.PutGrant(context.Background(), gr))
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, Grants: g})
	_, err = call(t, reg, "mcp_locked_echo", `{"text":"before"}`)
	require.NoError(t, err)

	o.Revoke()
	s := m.servers[0]
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	s.drop(sess) // the next call opens a session with the revoked token
	_, err = call(t, reg, "mcp_locked_echo", `{"text":"after"}`)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNeedsSignIn) || strings.Contains(err.Error(), ErrNeedsSignIn.Error()), "%v", err)
	require.NotContains(t, err.Error(), gr.Token.AccessToken)
	n, ok, err := g.Need(context.Background(), "locked")
	require.NoError(t, err)
	require.True(t, ok, "the server is listed as needing a sign-in again")
	require.Contains(t, n.Why, "signed-in token")
}

func TestGrantForAnotherURLIsNotSent(t *testing.T) {
	o := newOAuthServer(t)
	g, _ := newGrants(t)
	require.NoError(t, g.PutGrant(context.Background(), &Grant{Server: "locked", URL: "https://elsewhere.example/mcp",
		Token: &oauth2.Token{AccessToken: "tok-elsewhere", Expiry: time.Now().Add(time.Hour)}}))
	m, _ := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, Grants: g})
	require.ErrorIs(t, status(m, "locked").Err, ErrNeedsSignIn)
}
