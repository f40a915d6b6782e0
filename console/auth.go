package console

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/toolround/toolround/round"
)

// Roles a token may have (H1).
const (
	RoleAgent    = "agent"
	RoleApprover = "approver"
)

// Token is one line of the CONSOLE_TOKENS file.
type Token struct {
	Secret string
	Name   string
	Role   string
	// Sessions, when set, are the glob patterns (path.Match) of the
	// sessions the token may see and act on (H10); nil: every session.
	Sessions []string
}

// sessionsKey starts the optional fourth field of a tokens line.
const sessionsKey = "sessions="

// ParseTokens reads `TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]]` lines;
// blank lines and lines starting with # are skipped.
func ParseTokens(r io.Reader) ([]Token, error) {
	var out []Token
	s := bufio.NewScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 && len(f) != 4 {
			return nil, fmt.Errorf("tokens line %d: want TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]], got %d fields", n, len(f))
		}
		if f[2] != RoleAgent && f[2] != RoleApprover {
			return nil, fmt.Errorf("tokens line %d: role %q: want agent or approver", n, f[2])
		}
		if len(f[0]) < 16 {
			return nil, fmt.Errorf("tokens line %d: the token is shorter than 16 characters", n)
		}
		t := Token{Secret: f[0], Name: f[1], Role: f[2]}
		if len(f) == 4 {
			ps, err := parseSessionPatterns(f[3])
			if err != nil {
				return nil, fmt.Errorf("tokens line %d: %w", n, err)
			}
			t.Sessions = ps
		}
		out = append(out, t)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the tokens file has no token")
	}
	return out, nil
}

// parseSessionPatterns reads sessions=PATTERN[,PATTERN]. A pattern is a
// glob (path.Match: *, ?, [...]) over the characters of a session id
// (letters, digits, '.', '_', '-'); it matches a whole session id, never a
// prefix, and case matters, as in session ids.
func parseSessionPatterns(field string) ([]string, error) {
	list, ok := strings.CutPrefix(field, sessionsKey)
	if !ok {
		return nil, fmt.Errorf("the fourth field %q: want sessions=PATTERN[,PATTERN]", field)
	}
	if list == "" {
		return nil, fmt.Errorf("sessions= names no pattern: leave the field out for every session")
	}
	var out []string
	for _, p := range strings.Split(list, ",") {
		if p == "" {
			return nil, fmt.Errorf("sessions=%s has an empty pattern", list)
		}
		for _, c := range p {
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("._-*?[]^", c):
			case c == '!':
				// path.Match negates a class with ^; [!a] would be '!' or
				// 'a', the opposite of what a shell reader means.
				return nil, fmt.Errorf("session pattern %q: negate a class with [^...], not [!...]", p)
			default:
				return nil, fmt.Errorf("session pattern %q: %q can be in no session id (letters, digits, '.', '_', '-'; globs *, ? and [...])", p, c)
			}
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("session pattern %q: %w", p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

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
}

// allows reports whether p may see and act on the session's workflows.
func (p principal) allows(session string) bool {
	if p.Scope == nil {
		return true
	}
	if !round.ValidIdentifier(session) {
		return false
	}
	for _, pat := range p.Scope {
		if ok, err := path.Match(pat, session); err == nil && ok {
			return true
		}
	}
	return false
}

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
}

func newTokenSet(ts []Token) *tokenSet {
	s := &tokenSet{}
	for _, t := range ts {
		s.entries = append(s.entries, tokenEntry{digest: sha256.Sum256([]byte(t.Secret)), name: t.Name, role: t.Role, scope: t.Sessions})
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
		return principal{Name: e.name, Role: e.role, Via: "api", Scope: e.scope}, true
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

// Covers reports whether the token may see and act on the session (H2):
// every session when it has no scope.
func (t Token) Covers(session string) bool {
	return principal{Scope: t.Sessions}.allows(session)
}
