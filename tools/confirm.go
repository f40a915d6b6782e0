package tools

import (
	"encoding/json"
	"path"
	"strings"
)

// AllowRule approves, without asking, calls of Tool whose subject matches
// Pattern; '*' in Pattern matches any run of characters, '/' included. Rules
// are added by a confirmation with remember set (P1.6).
type AllowRule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
}

// Matches reports whether the rule covers a call of tool with that subject.
func (r AllowRule) Matches(tool, subject string) bool {
	return r.Tool == tool && wildcard(r.Pattern, subject)
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
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

// SubjectOf names what a call is about, for confirmations and allow rules:
// the definition's own Subject, else the canonical arguments.
func SubjectOf(d *Definition, args json.RawMessage) string {
	if d != nil && d.Subject != nil {
		if s := d.Subject(args); s != "" {
			return s
		}
	}
	if c, ok := Canonical(args); ok {
		return c
	}
	return strings.TrimSpace(string(args))
}

// EffectOf is the side-effect class of one call.
func EffectOf(d *Definition, args json.RawMessage) SideEffect {
	if d.Effect != nil {
		if e := d.Effect(args); e != "" {
			return e
		}
	}
	return d.SideEffect
}

// SubjectField returns a Subject function that reads one string field.
func SubjectField(field string) func(json.RawMessage) string {
	return func(args json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return ""
		}
		s, _ := m[field].(string)
		return s
	}
}

// sensitiveNames are file names and folders that hold keys and credentials.
var sensitiveNames = []string{
	".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".npmrc", ".pypirc", ".pgpass",
	".git-credentials", "credentials", "credentials.*", "*credentials*.json", "secrets.*", "*.secret",
	".htpasswd", "shadow", "kubeconfig", "service-account*.json",
}

var sensitiveDirs = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".config/gcloud"}

// SensitivePath reports whether a path names keys, credentials or a .env file:
// reading it always asks for confirmation (C4).
func SensitivePath(p string) bool {
	p = path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	base := strings.ToLower(path.Base(p))
	for _, pat := range sensitiveNames {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	lower := strings.ToLower(p) + "/"
	for _, d := range sensitiveDirs {
		if strings.Contains(lower, "/"+d+"/") {
			return true
		}
	}
	return false
}
