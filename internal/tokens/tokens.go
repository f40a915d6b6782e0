// Package tokens reads the CONSOLE_TOKENS file (H1, H10): who may use the
// console and the API, in which role, on which sessions. The console
// authenticates with it; workers read it for the approver of signed links.
package tokens

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/toolround/toolround/round/names"
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
	// ApproveByElicitation is the operator's statement that a person sits
	// at this agent token's MCP client (`approve=elicitation`): with
	// MCP_GATEWAY_APPROVE=elicitation the gateway asks that person (Z3).
	ApproveByElicitation bool
}

// approveKey is the optional field that marks an agent token whose MCP
// client has a person at it.
const approveKey = "approve=elicitation"

// sessionsKey starts the optional fourth field of a tokens line.
const sessionsKey = "sessions="

// Parse reads `TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]] [approve=elicitation]`
// lines; blank lines and lines starting with # are skipped.
func Parse(r io.Reader) ([]Token, error) {
	var out []Token
	s := bufio.NewScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(f) > 5 {
			return nil, fmt.Errorf("tokens line %d: want TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]] [approve=elicitation], got %d fields", n, len(f))
		}
		if f[2] != RoleAgent && f[2] != RoleApprover {
			return nil, fmt.Errorf("tokens line %d: role %q: want agent or approver", n, f[2])
		}
		if len(f[0]) < 16 {
			return nil, fmt.Errorf("tokens line %d: the token is shorter than 16 characters", n)
		}
		t := Token{Secret: f[0], Name: f[1], Role: f[2]}
		for _, field := range f[3:] {
			switch {
			case field == approveKey && !t.ApproveByElicitation:
				if t.Role != RoleAgent {
					return nil, fmt.Errorf("tokens line %d: approve=elicitation marks an agent token; an approver approves anyway", n)
				}
				t.ApproveByElicitation = true
			case strings.HasPrefix(field, "approve="):
				return nil, fmt.Errorf("tokens line %d: %q: the one value is approve=elicitation", n, field)
			case t.Sessions == nil:
				ps, err := parseSessionPatterns(field)
				if err != nil {
					return nil, fmt.Errorf("tokens line %d: %w", n, err)
				}
				t.Sessions = ps
			default:
				return nil, fmt.Errorf("tokens line %d: %q: want TOKEN NAME ROLE [sessions=PATTERN[,PATTERN]] [approve=elicitation]", n, field)
			}
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

// Covers reports whether the token may see and act on the session (H2):
// every session when it has no scope.
func (t Token) Covers(session string) bool { return Allows(t.Sessions, session) }

// Allows reports whether a scope (session patterns; nil: every session)
// covers the session.
func Allows(scope []string, session string) bool {
	if scope == nil {
		return true
	}
	if !names.ValidIdentifier(session) {
		return false
	}
	for _, pat := range scope {
		if ok, err := path.Match(pat, session); err == nil && ok {
			return true
		}
	}
	return false
}
