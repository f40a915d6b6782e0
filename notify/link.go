package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/keyfile"
)

// Decisions a link carries.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// Link is what a signed link's token carries (N2): the wait it decides,
// the decision, who decides (NOTIFY_APPROVER), until when (the call's
// deadline, Unix seconds) and a nonce the round records when it is used.
type Link struct {
	WorkflowID string `json:"w"`
	CallID     string `json:"c"`
	WaitID     string `json:"i"`
	Decision   string `json:"d"`
	By         string `json:"b"`
	Expires    int64  `json:"e"`
	Nonce      string `json:"n"`
}

// MintLink is the token of l: base64url(JSON) "." base64url(HMAC-SHA256
// keyed with the link key).
func MintLink(key []byte, l Link) string {
	b, _ := json.Marshal(l)
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key, body))
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("toolround-link.v1."))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Errors of VerifyLink.
var (
	ErrBadLink     = errors.New("the link's signature does not verify")
	ErrLinkExpired = errors.New("the link has expired: the call's deadline has passed")
)

// VerifyLink reads a token: ErrBadLink when it is malformed or its
// signature does not verify, ErrLinkExpired after its expiry.
func VerifyLink(key []byte, token string, now time.Time) (Link, error) {
	body, sig, ok := strings.Cut(strings.TrimSpace(token), ".")
	if !ok || len(key) == 0 {
		return Link{}, ErrBadLink
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, body)) {
		return Link{}, ErrBadLink
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	var l Link
	if err != nil || json.Unmarshal(raw, &l) != nil || l.Nonce == "" || (l.Decision != DecisionApprove && l.Decision != DecisionDeny) {
		return Link{}, ErrBadLink
	}
	if !now.Before(time.Unix(l.Expires, 0)) {
		return l, ErrLinkExpired
	}
	return l, nil
}

// VerifyLinkWith is VerifyLink with the first of keys that verifies the
// signature: the link key, then, during a rotation, the previous one
// (NOTIFY_LINK_KEY_PREVIOUS), so links minted before the rotation keep
// working until they expire. Nil keys are skipped.
func VerifyLinkWith(keys [][]byte, token string, now time.Time) (Link, error) {
	for _, key := range keys {
		if len(key) == 0 {
			continue
		}
		if l, err := VerifyLink(key, token, now); !errors.Is(err, ErrBadLink) {
			return l, err
		}
	}
	return Link{}, ErrBadLink
}

// nonce is the link's nonce: derived from the notification and the
// decision, so that a retried webhook carries the same links, and unlike
// any other notification's.
func nonce(key []byte, notifyID, decision string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("toolround-link-nonce." + notifyID + "." + decision))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// LinkKeyConfig says where the link key comes from: NOTIFY_LINK_KEY (base64
// of 32 bytes) or the file NOTIFY_LINK_KEY_FILE (default
// ~/.config/toolround/link.key, created on first use), as for the rule key.
// Workers and the console hold it; never NOTIFY_SECRET, which every webhook
// receiver holds.
type LinkKeyConfig struct {
	Key     string
	KeyFile string
	// Previous is NOTIFY_LINK_KEY_PREVIOUS, the base64 key being rotated
	// out: links it signed still verify, no link is minted with it.
	Previous string
}

// LinkKeyConfigFromEnv reads NOTIFY_LINK_KEY, NOTIFY_LINK_KEY_FILE and
// NOTIFY_LINK_KEY_PREVIOUS.
func LinkKeyConfigFromEnv() LinkKeyConfig {
	return LinkKeyConfig{Key: os.Getenv(EnvLinkKey), KeyFile: os.Getenv(EnvLinkKeyFile), Previous: os.Getenv(EnvLinkKeyPrevious)}
}

var linkKey = keyfile.Kind{Prefix: "notify: link key", FileName: "link.key", EnvKey: EnvLinkKey, EnvFile: EnvLinkKeyFile}

// LoadKey returns the 32-byte link key, creating the key file on first use.
func (c LinkKeyConfig) LoadKey() ([]byte, error) { return linkKey.Load(c.Key, c.KeyFile) }

// LoadPrevious returns the previous link key (nil when none is set).
func (c LinkKeyConfig) LoadPrevious() ([]byte, error) { return linkKey.LoadPrevious(c.Previous) }
