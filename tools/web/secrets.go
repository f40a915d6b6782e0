package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// secretSet expands the placeholders of one call and remembers the values,
// so that anything shown afterwards can be scrubbed of them.
type secretSet struct {
	store   tools.Secrets
	session string
	values  map[string]string // name -> value

	red    *secrets.Redactor
	redFor int // len(values) when red was built
}

func newSecretSet(store tools.Secrets, session string) *secretSet {
	return &secretSet{store: store, session: session, values: map[string]string{}}
}

// expand replaces the placeholders in s; escape (may be nil) encodes a value
// for where it lands, such as a URL.
func (s *secretSet) expand(ctx context.Context, text string, escape func(string) string) (string, error) {
	matches := approval.SecretPlaceholder.FindAllStringSubmatchIndex(text, -1)
	if len(matches) == 0 {
		return text, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		name := text[m[2]:m[3]]
		v, err := s.lookup(ctx, name)
		if err != nil {
			return "", err
		}
		if escape != nil {
			v = escape(v)
		}
		b.WriteString(text[last:m[0]])
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

func (s *secretSet) lookup(ctx context.Context, name string) (string, error) {
	if v, ok := s.values[name]; ok {
		return v, nil
	}
	missing := fmt.Sprintf("secret %s is missing: store it with store_secret(name=%q, value=...), then call http_request again", name, name)
	if s.store == nil {
		return "", fmt.Errorf("%s (no secret store is configured on this worker)", missing)
	}
	v, err := s.store.Get(ctx, s.session, name)
	if err != nil {
		return "", fmt.Errorf("%s (%v)", missing, err)
	}
	if v == "" {
		return "", fmt.Errorf("%s", missing)
	}
	s.values[name] = v
	return v, nil
}

// redactor redacts every value expanded so far, in every encoding (see
// secrets.Redactor).
func (s *secretSet) redactor() *secrets.Redactor {
	if s == nil {
		return nil
	}
	if s.red == nil || s.redFor != len(s.values) {
		s.red, s.redFor = secrets.NewRedactor(s.values), len(s.values)
	}
	return s.red
}

// redact replaces every expanded value, in any encoding, with [secret:NAME].
func (s *secretSet) redact(text string) string { return s.redactor().Redact(text) }

// escapeURL encodes a value for any part of a URL: userinfo, path, query
// or fragment. A space becomes %20, which means a space everywhere (a +
// means one only in a query).
func escapeURL(v string) string { return strings.ReplaceAll(url.QueryEscape(v), "+", "%20") }
