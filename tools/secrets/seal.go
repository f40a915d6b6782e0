package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SealedPrefix starts every sealed value: "sealed:v1:" then the base64 of
// the GCM nonce followed by the ciphertext.
const SealedPrefix = "sealed:v1:"

// ErrOpen is returned when a sealed value does not decrypt: it was sealed
// with another key, or altered.
var ErrOpen = errors.New("secrets: the sealed value does not open with this key (sealed with another key, or altered)")

// IsSealed reports whether s looks like the output of Seal.
func IsSealed(s string) bool { return strings.HasPrefix(s, SealedPrefix) }

// Seal encrypts plaintext with AES-256-GCM under key.
func Seal(key []byte, plaintext string) (string, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secrets: seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return SealedPrefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal, with key or, during a rotation, the
// key it replaced (AcceptPrevious). Errors never include the value.
func Open(key []byte, sealed string) (string, error) {
	plain, err := open(key, sealed)
	if errors.Is(err, ErrOpen) {
		if previous := previousOf(key); previous != nil {
			if p, perr := open(previous, sealed); perr == nil {
				return p, nil
			}
		}
	}
	return plain, err
}

func open(key []byte, sealed string) (string, error) {
	if !IsSealed(sealed) {
		return "", fmt.Errorf("secrets: open: the value does not start with %q", SealedPrefix)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return "", err
	}
	raw, err := base64.StdEncoding.DecodeString(sealed[len(SealedPrefix):])
	if err != nil {
		return "", errors.New("secrets: open: the sealed value is not valid base64")
	}
	if len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", errors.New("secrets: open: the sealed value is too short")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secrets: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return aead, nil
}
