package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/tokens"
)

// Roles a token may have (H1).
const (
	RoleAgent    = tokens.RoleAgent
	RoleApprover = tokens.RoleApprover
)

// Token is one line of the CONSOLE_TOKENS file.
type Token = tokens.Token

// ParseTokens reads `TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]]` lines;
// blank lines and lines starting with # are skipped.
func ParseTokens(r io.Reader) ([]Token, error) { return tokens.Parse(r) }

// NewToken is a random token for people to paste: 32 hex digits.
func NewToken() string { return randomHex(16) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	return hex.EncodeToString(b)
}

// principal is who a request acts as.
type principal struct {
	Name string
	Role string
	// Via is "api" for bearer requests, "console" for the page's cookie.
	Via string
	// CSRF is the page session's CSRF token; empty for bearer requests.
	CSRF string
	// Scope is the token's session patterns; nil: every session.
	Scope []string
	// Elicit: the token's line says a person sits at its MCP client
	// (approve=elicitation, Z3).
	Elicit bool
}

// allows reports whether p may see and act on the session's workflows.
func (p principal) allows(session string) bool { return tokens.Allows(p.Scope, session) }

type tokenSet struct {
	// digests of the secrets: comparing equal-length digests in constant
	// time tells nothing about a secret's length or prefix.
	entries []tokenEntry
}

type tokenEntry struct {
	digest [32]byte
	name   string
	role   string
	scope  []string
	elicit bool
}

func newTokenSet(ts []Token) *tokenSet {
	s := &tokenSet{}
	for _, t := range ts {
		s.entries = append(s.entries, tokenEntry{digest: sha256.Sum256([]byte(t.Secret)), name: t.Name, role: t.Role, scope: t.Sessions, elicit: t.ApproveByElicitation})
	}
	return s
}

func (s *tokenSet) lookup(secret string) (tokenEntry, bool) {
	return s.lookupDigest(sha256.Sum256([]byte(secret)))
}

// lookupDigest finds the token whose secret has digest d.
func (s *tokenSet) lookupDigest(d [32]byte) (tokenEntry, bool) {
	var found tokenEntry
	ok := 0
	for _, e := range s.entries {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found, ok = e, 1
		}
	}
	return found, ok == 1
}

// pageSession is a signed-in person of the page, read from its cookie.
type pageSession struct {
	name, role, csrf string
	scope            []string
	// nonce names the sign-in; a sign-out revokes it.
	nonce   string
	expires time.Time
}

const cookieName = "toolround_console"

// authenticate finds who a request acts as: a bearer token first, else the
// page's cookie. ok is false for neither. The scheme is compared without
// regard to case (RFC 7235): Bearer, bearer and BEARER are one.
func (s *Server) authenticate(r *http.Request) (principal, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") {
			return principal{}, false
		}
		e, ok := s.tokens.lookup(strings.TrimSpace(tok))
		if !ok {
			return principal{}, false
		}
		return principal{Name: e.name, Role: e.role, Via: "api", Scope: e.scope, Elicit: e.elicit}, true
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return principal{}, false
	}
	ps, ok := s.cookies.open(r.Context(), c.Value, s.tokens, time.Now())
	if !ok {
		return principal{}, false
	}
	return principal{Name: ps.name, Role: ps.role, Via: "console", CSRF: ps.csrf, Scope: ps.scope}, true
}

// csrfOK checks the CSRF token of a state-changing page request: the
// X-CSRF-Token header (the page's script) or the csrf form field (its plain
// forms). Bearer requests carry no cookie, so they need none.
func csrfOK(p principal, r *http.Request) bool {
	if p.Via != "console" {
		return true
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" && isForm(r) {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(p.CSRF)) == 1
}

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data")
}
