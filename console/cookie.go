package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Page sign-ins live in their cookies (O3): the cookie is sealed
// (AES-256-GCM) with the session key, CONSOLE_SESSION_KEY, so every console
// that holds the key reads a sign-in made on another, and none keeps a
// table of them. The cookie names its token by digest, never by secret, and
// a token taken out of CONSOLE_TOKENS ends its sign-ins on every console.
// The CSRF token is an HMAC of the sign-in's nonce, so any console derives
// it. A sign-out is recorded in Revocations until the cookie would expire.

// SessionKeySize is the size of CONSOLE_SESSION_KEY, decoded.
const SessionKeySize = 32

// Revocations keeps the nonces of signed-out cookies until they would have
// expired, for every console that shares them (O3).
type Revocations interface {
	Revoke(ctx context.Context, nonce string, until time.Time) error
	Revoked(ctx context.Context, nonce string) (bool, error)
}

// memoryRevocations are one console's own: the default.
type memoryRevocations struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (r *memoryRevocations) Revoke(_ context.Context, nonce string, until time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for k, v := range r.m {
		if now.After(v) {
			delete(r.m, k)
		}
	}
	r.m[nonce] = until
	return nil
}

func (r *memoryRevocations) Revoked(_ context.Context, nonce string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[nonce]
	return ok, nil
}

// pageCookies seal and open page sign-ins.
type pageCookies struct {
	// keys[0] seals new sign-ins; a later one, the session key being
	// rotated out (CONSOLE_SESSION_KEY_PREVIOUS), still opens its own.
	keys    []cookieKey
	ttl     time.Duration
	revoked Revocations
}

// cookieKey is what one session key gives: the cookie's cipher, the key
// of its CSRF tokens, and the cipher of what the consoles keep for each
// other in Redis (started MCP sign-ins).
type cookieKey struct {
	aead    cipher.AEAD
	csrfKey []byte
	shared  cipher.AEAD
}

// cookieBody is what a sealed cookie holds.
type cookieBody struct {
	Digest  string `json:"d"`
	Expires int64  `json:"e"`
	Nonce   string `json:"n"`
}

// newPageCookies seals with key and also opens what the previous keys
// sealed (a rotation's window), so that rotating the session key does not
// sign everyone out at once.
func newPageCookies(key []byte, ttl time.Duration, revoked Revocations, previous ...[]byte) (*pageCookies, error) {
	c := &pageCookies{ttl: ttl, revoked: revoked}
	for i, k := range append([][]byte{key}, previous...) {
		if i > 0 && len(k) == 0 {
			continue
		}
		if len(k) != SessionKeySize {
			return nil, errors.New("console: the session key must be 32 bytes")
		}
		// One key, three uses: derive one for cookies, one for CSRF tokens
		// and one for what the consoles share.
		aead, err := newAEAD(derive(k, "toolround console cookie v1"))
		if err != nil {
			return nil, err
		}
		shared, err := newAEAD(derive(k, "toolround console shared v1"))
		if err != nil {
			return nil, err
		}
		c.keys = append(c.keys, cookieKey{aead: aead, csrfKey: derive(k, "toolround console csrf v1"), shared: shared})
	}
	if c.revoked == nil {
		c.revoked = &memoryRevocations{m: map[string]time.Time{}}
	}
	return c, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal seals plain with the session key for what (AES-256-GCM, what as
// the additional data): it opens only as what, on a console that holds
// the key.
func (c *pageCookies) seal(what string, plain []byte) []byte {
	k := c.keys[0].shared
	nonce := make([]byte, k.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	return k.Seal(nonce, nonce, plain, []byte(what))
}

// unseal opens what seal sealed for what, with the session key or a
// previous one.
func (c *pageCookies) unseal(what string, sealed []byte) ([]byte, bool) {
	for _, key := range c.keys {
		k := key.shared
		ns := k.NonceSize()
		if len(sealed) < ns {
			return nil, false
		}
		if plain, err := k.Open(nil, sealed[:ns], sealed[ns:], []byte(what)); err == nil {
			return plain, true
		}
	}
	return nil, false
}

func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// create seals a sign-in of e, valid for ttl from now, with the session key.
func (c *pageCookies) create(e tokenEntry, now time.Time) (string, pageSession) {
	k := c.keys[0]
	b := cookieBody{Digest: hex.EncodeToString(e.digest[:]), Expires: now.Add(c.ttl).Unix(), Nonce: randomHex(16)}
	plain, _ := json.Marshal(b)
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	sealed := k.aead.Seal(nonce, nonce, plain, []byte(cookieName))
	return base64.RawURLEncoding.EncodeToString(sealed), k.session(e, b)
}

// session is the sign-in a cookie sealed with k holds; its CSRF token is
// k's, the one its page was given.
func (k cookieKey) session(e tokenEntry, b cookieBody) pageSession {
	m := hmac.New(sha256.New, k.csrfKey)
	m.Write([]byte(b.Nonce))
	return pageSession{name: e.name, role: e.role, scope: e.scope, nonce: b.Nonce,
		csrf: hex.EncodeToString(m.Sum(nil)), expires: time.Unix(b.Expires, 0)}
}

// open reads a cookie: sealed with the key (or a previous one), not
// expired, not signed out, its token still known.
func (c *pageCookies) open(ctx context.Context, value string, tokens *tokenSet, now time.Time) (pageSession, bool) {
	b, k, ok := c.body(value)
	if !ok || now.Unix() >= b.Expires {
		return pageSession{}, false
	}
	d, err := hex.DecodeString(b.Digest)
	if err != nil || len(d) != sha256.Size {
		return pageSession{}, false
	}
	e, ok := tokens.lookupDigest([sha256.Size]byte(d))
	if !ok {
		return pageSession{}, false
	}
	if revoked, err := c.revoked.Revoked(ctx, b.Nonce); err != nil || revoked {
		// A store that cannot answer signs no one in: a sign-out must hold.
		return pageSession{}, false
	}
	return k.session(e, b), true
}

// body opens a cookie with the first key that opens it.
func (c *pageCookies) body(value string) (cookieBody, cookieKey, bool) {
	sealed, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return cookieBody{}, cookieKey{}, false
	}
	for _, k := range c.keys {
		ns := k.aead.NonceSize()
		if len(sealed) < ns {
			return cookieBody{}, cookieKey{}, false
		}
		plain, err := k.aead.Open(nil, sealed[:ns], sealed[ns:], []byte(cookieName))
		if err != nil {
			continue
		}
		var b cookieBody
		if json.Unmarshal(plain, &b) != nil || b.Nonce == "" {
			return cookieBody{}, cookieKey{}, false
		}
		return b, k, true
	}
	return cookieBody{}, cookieKey{}, false
}

// drop signs a cookie out on every console that shares the revocations.
func (c *pageCookies) drop(ctx context.Context, value string) error {
	b, _, ok := c.body(value)
	if !ok {
		return nil
	}
	return c.revoked.Revoke(ctx, b.Nonce, time.Unix(b.Expires, 0))
}

// RedisRevocations keep sign-outs in Redis, for every console that uses
// the same database (O3).
type RedisRevocations struct{ RDB redis.Cmdable }

func revocationKey(nonce string) string { return "toolround:console:signout:" + nonce }

// Revoke records the sign-out until the cookie would have expired.
func (r RedisRevocations) Revoke(ctx context.Context, nonce string, until time.Time) error {
	ttl := time.Until(until)
	if ttl <= 0 {
		return nil
	}
	return r.RDB.Set(ctx, revocationKey(nonce), "1", ttl+time.Minute).Err()
}

// Revoked reports whether the sign-in was signed out.
func (r RedisRevocations) Revoked(ctx context.Context, nonce string) (bool, error) {
	n, err := r.RDB.Exists(ctx, revocationKey(nonce)).Result()
	return n > 0, err
}
