package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// Rule is an allow rule remembered from a confirmation (P1.6, T4). A rule
// approves, without asking, the later calls of Tool in the same run that it
// matches (see Match):
//   - without Pattern: the calls whose canonical arguments are exactly Args;
//   - with Pattern: the calls the pattern matches, read per tool kind
//     (shell commands, file paths, HTTP requests, or canonical arguments);
//   - with Secret and Pattern: additionally lets the HTTP calls the pattern
//     matches send {{secret:Secret}} (T5).
//
// MAC binds the rule to its session and run (Sign); rules without a valid
// MAC are ignored (Verified).
type Rule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern,omitempty"`
	Args    string `json:"args,omitempty"`
	Secret  string `json:"secret,omitempty"`
	// UpTo, when set, bounds the rule to that many matching calls of the
	// run (B2). The MAC covers it: a rule whose bound was removed or raised
	// fails Verify.
	UpTo int64 `json:"up_to,omitempty"`
	// Scope is what a command the rule approves may change (T12):
	// ScopeReadOnly or ScopeWrite. The MAC covers it when set; a rule
	// without one was stored before T11 and runs with ScopeWrite
	// (EffectiveScope).
	Scope string `json:"scope,omitempty"`
	// Schema is the schema hash of the user tool the rule was remembered
	// for (Y3): the rule approves calls of the tool only while it keeps
	// that schema. The MAC covers it when set.
	Schema string `json:"schema,omitempty"`
	MAC    string `json:"mac,omitempty"`
}

// Scopes of a rule (T12): a command a rule approves runs in the sandbox
// seeing the workspace read-only (ScopeReadOnly) or writable (ScopeWrite);
// the protected set is read-only under both.
const (
	ScopeReadOnly = "read-only"
	ScopeWrite    = "write"
)

// EffectiveScope is the scope a command the rule approves runs with: its
// Scope, or ScopeWrite for a rule stored before scopes existed.
func (r Rule) EffectiveScope() string {
	if r.Scope == ScopeReadOnly {
		return ScopeReadOnly
	}
	return ScopeWrite
}

// ValidScope reports whether s is a scope a decision may ask for: empty
// (the default) or one of the scopes.
func ValidScope(s string) bool {
	return s == "" || s == ScopeReadOnly || s == ScopeWrite
}

// Sign returns r with the MAC of (session, run, tool, rule) keyed with key.
func Sign(key []byte, session, run string, r Rule) Rule {
	r.MAC = mac(key, session, run, r)
	return r
}

// Verify reports whether r carries a valid MAC for session and run. A rule
// copied from another run or session, or changed after signing, fails; so
// does every rule when key is not a KeySize-byte key.
func Verify(key []byte, session, run string, r Rule) bool {
	if len(key) != KeySize || r.MAC == "" {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(r.MAC)
	if err != nil {
		return false
	}
	want, _ := base64.RawURLEncoding.DecodeString(mac(key, session, run, r))
	return hmac.Equal(got, want)
}

// Verified returns the rules of a run state that Verify accepts, in order;
// the others are dropped, so a forged state acts like an empty one.
func Verified(key []byte, session, run string, rules []Rule) []Rule {
	var out []Rule
	for _, r := range rules {
		if Verify(key, session, run, r) {
			out = append(out, r)
		}
	}
	return out
}

func mac(key []byte, session, run string, r Rule) string {
	h := hmac.New(sha256.New, key)
	fields := []string{"toolround rule v1", session, run, r.Tool, r.Pattern, r.Args, r.Secret}
	if r.UpTo != 0 {
		// Rules without a bound keep the MACs they were signed with.
		fields = append(fields, "up_to", strconv.FormatInt(r.UpTo, 10))
	}
	if r.Scope != "" {
		// Rules without a scope keep the MACs they were signed with (T12).
		fields = append(fields, "scope", r.Scope)
	}
	if r.Schema != "" {
		fields = append(fields, "schema", r.Schema)
	}
	writeFields(h, fields...)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
