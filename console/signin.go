package console

import (
	"crypto/sha256"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"
)

// One-time sign-in links: a console mints a link for one of its tokens
// (cmd/console prints one at start for its generated token, or for
// CONSOLE_SIGNIN's); its code sits in the URL's fragment, which no request
// carries, as the signed links' tokens do (N2). GET /signin is a page that
// takes the code out of the address bar and posts it as the form field
// `code`; POST /signin takes the code once, even when it fails after, and
// sets the page's session cookie as the token form does. The codes live in
// this console's memory: a link works on the console that printed it, and
// ends with it. No log holds a code.

// SignInLinkTTL is how long a sign-in link works when not used.
const SignInLinkTTL = time.Hour

// signInCodes are the codes not used yet, by digest.
type signInCodes struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]signInCode
}

type signInCode struct {
	token   tokenEntry
	expires time.Time
}

// take removes the code and reports what it was: its token, and whether
// it had expired. A code is taken once.
func (c *signInCodes) take(code string, now time.Time) (tokenEntry, bool, bool) {
	d := sha256.Sum256([]byte(code))
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if now.After(v.expires) && k != d {
			delete(c.m, k)
		}
	}
	v, ok := c.m[d]
	if !ok {
		return tokenEntry{}, false, false
	}
	delete(c.m, d)
	if now.After(v.expires) {
		return tokenEntry{}, false, true
	}
	return v.token, true, false
}

// SignInLink mints a link that signs a browser in once as the token named
// name, within ttl (SignInLinkTTL when 0): the console's BaseURL (or "/")
// followed by signin#CODE.
func (s *Server) SignInLink(name string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = SignInLinkTTL
	}
	var e tokenEntry
	found := false
	for _, t := range s.tokens.entries {
		if t.name == name {
			e, found = t, true
			break
		}
	}
	if !found {
		return "", errors.New("console: no token named " + name + " to sign in as")
	}
	code := randomHex(32)
	s.codes.mu.Lock()
	s.codes.m[sha256.Sum256([]byte(code))] = signInCode{token: e, expires: s.opts.Now().Add(ttl)}
	s.codes.mu.Unlock()
	base := s.opts.BaseURL
	if base == "" {
		base = "/"
	}
	return strings.TrimSuffix(base, "/") + "/signin#" + code, nil
}

var signInPage = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title>
<meta name="referrer" content="no-referrer">
<link rel="stylesheet" href="/assets/style.css"></head>
<body><main class="link">
<h1>Sign in</h1>
<p id="signin-what">Signing in…</p>
<form id="signin-form" method="post" action="/signin">
<input type="hidden" name="code" id="signin-code">
<noscript><p>This link needs JavaScript: sign in with the token instead, on <a href="/login">the sign-in page</a>.</p></noscript>
</form>
<script src="/assets/signin.js"></script>
</main></body></html>
`))

func (s *Server) getSignIn(w http.ResponseWriter, r *http.Request) {
	linkHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = signInPage.Execute(w, nil)
}

func (s *Server) postSignIn(w http.ResponseWriter, r *http.Request) {
	linkHeaders(w)
	refuse := func(status int, msg string) {
		s.render(w, status, "login", loginData{pageData{Title: "Sign in", Return: "/", Message: msg}})
	}
	if !signInForm(w, r) {
		return
	}
	e, ok, expired := s.codes.take(strings.TrimSpace(r.PostForm.Get("code")), s.opts.Now())
	switch {
	case expired:
		refuse(http.StatusGone, "That sign-in link has expired: sign in with the token, or restart the console for a new link.")
		return
	case !ok:
		refuse(http.StatusUnauthorized, "That sign-in link is not known to this console, or was used already: a link signs in once. Sign in with the token.")
		return
	}
	if _, known := s.tokens.lookupDigest(e.digest); !known {
		refuse(http.StatusUnauthorized, "The link's token is not known to this console any more.")
		return
	}
	id, _ := s.cookies.create(e, time.Now())
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.opts.SessionTTL / time.Second)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
