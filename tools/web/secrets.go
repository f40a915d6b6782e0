package web

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/toolround/toolround/tools"
)

// secretRef is a {{secret:NAME}} placeholder.
var secretRef = regexp.MustCompile(`\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}`)

// secretSet expands the placeholders of one call and remembers the values,
// so that anything shown afterwards can be scrubbed of them.
type secretSet struct {
	store   tools.Secrets
	session string
	values  map[string]string // name -> value
}

func newSecretSet(store tools.Secrets, session string) *secretSet {
	return &secretSet{store: store, session: session, values: map[string]string{}}
}

// expand replaces the placeholders in s; escape (may be nil) encodes a value
// for where it lands, such as a URL.
func (s *secretSet) expand(ctx context.Context, text string, escape func(string) string) (string, error) {
	matches := secretRef.FindAllStringSubmatchIndex(text, -1)
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

// redact replaces every expanded value, raw or URL-encoded, with
// [secret:NAME]. Longer values go first so that a value containing another
// is replaced whole.
func (s *secretSet) redact(text string) string {
	if s == nil || len(s.values) == 0 {
		return text
	}
	type pair struct{ value, name string }
	var pairs []pair
	for name, v := range s.values {
		pairs = append(pairs, pair{v, name})
		for _, enc := range []string{url.QueryEscape(v), url.PathEscape(v)} {
			if enc != v {
				pairs = append(pairs, pair{enc, name})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].value) > len(pairs[j].value) })
	for _, p := range pairs {
		text = strings.ReplaceAll(text, p.value, "[secret:"+p.name+"]")
	}
	return text
}

// redactCut is redact for text that was cut off: a value whose start was
// left at the very end is dropped too.
func (s *secretSet) redactCut(text string) string {
	if s == nil {
		return text
	}
	text = s.redact(text)
	for _, v := range s.values {
		for k := len(v) - 1; k > 0; k-- {
			if strings.HasSuffix(text, v[:k]) {
				text = text[:len(text)-k]
				break
			}
		}
	}
	return text
}
