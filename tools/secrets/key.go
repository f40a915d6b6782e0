// Package secrets keeps store_secret values encrypted: AES-256-GCM sealing
// with a configured key, and a per-session store that implements tools.Secrets.
package secrets

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/toolround/toolround/internal/keyfile"
)

// Environment variables read by ConfigFromEnv.
const (
	// EnvKey holds the base64 text of a 32-byte key.
	EnvKey = "TOOLROUND_SECRET_KEY"
	// EnvKeyFile names a file that holds the base64 key.
	EnvKeyFile = "TOOLROUND_SECRET_KEY_FILE"
	// EnvKeyPrevious holds the key being rotated out: what it sealed
	// still opens, nothing new is sealed with it.
	EnvKeyPrevious = "TOOLROUND_SECRET_KEY_PREVIOUS"
)

// KeySize is the length of an AES-256 key.
const KeySize = keyfile.Size

// Config says where the sealing key comes from. Every process that seals or
// opens a session's secrets (the workers and the client that seals round
// arguments) must load the same key: on more than one machine, set Key.
type Config struct {
	// Key is the base64 text of a 32-byte key. Empty: the key is read from
	// KeyFile.
	Key string
	// KeyFile holds the base64 key. It is created with a new random key,
	// mode 0600 in a 0700 folder, when it does not exist yet.
	// Empty: DefaultKeyFile().
	KeyFile string
	// Previous is the base64 text of the key being rotated out, or empty.
	// LoadKey makes Open accept it beside the key it returns.
	Previous string
}

// ConfigFromEnv reads TOOLROUND_SECRET_KEY, TOOLROUND_SECRET_KEY_FILE and
// TOOLROUND_SECRET_KEY_PREVIOUS.
func ConfigFromEnv() Config {
	return Config{Key: os.Getenv(EnvKey), KeyFile: os.Getenv(EnvKeyFile), Previous: os.Getenv(EnvKeyPrevious)}
}

// secretKey is the secret key's file and errors.
var secretKey = keyfile.Kind{Prefix: "secrets: key", FileName: "secret.key", EnvKey: EnvKey, EnvFile: EnvKeyFile}

// DefaultKeyFile is $XDG_CONFIG_HOME/toolround/secret.key, or
// ~/.config/toolround/secret.key when XDG_CONFIG_HOME is not set.
func DefaultKeyFile() (string, error) { return secretKey.DefaultFile() }

// LoadKey returns the 32-byte key: Key when set, else the key file's,
// creating the file on first use. With Previous set, Open accepts what the
// previous key sealed wherever this key is used (AcceptPrevious).
func (c Config) LoadKey() ([]byte, error) {
	key, err := secretKey.Load(c.Key, c.KeyFile)
	if err != nil {
		return nil, err
	}
	previous, err := secretKey.LoadPrevious(c.Previous)
	if err != nil {
		return nil, err
	}
	if previous != nil {
		AcceptPrevious(key, previous)
	}
	return key, nil
}

// previousKeys maps a key to the one it replaced, for the window of a
// rotation. The key is threaded through every seal and open of the
// process as a plain []byte; keeping its predecessor beside it here lets
// every one of them accept the old key's values without carrying two.
var previousKeys struct {
	sync.RWMutex
	m map[[KeySize]byte][]byte
}

// AcceptPrevious makes Open, called with key, also open what previous
// sealed (TOOLROUND_SECRET_KEY_PREVIOUS): values sealed before a rotation
// still open; Seal uses key only. A key is its own previous never.
func AcceptPrevious(key, previous []byte) {
	if len(key) != KeySize || len(previous) != KeySize || string(key) == string(previous) {
		return
	}
	previousKeys.Lock()
	defer previousKeys.Unlock()
	if previousKeys.m == nil {
		previousKeys.m = map[[KeySize]byte][]byte{}
	}
	previousKeys.m[[KeySize]byte(key)] = slices.Clone(previous)
}

// previousOf is the key that key replaced, nil when none.
func previousOf(key []byte) []byte {
	if len(key) != KeySize {
		return nil
	}
	previousKeys.RLock()
	defer previousKeys.RUnlock()
	return previousKeys.m[[KeySize]byte(key)]
}

// DecodeKey parses the base64 text of a 32-byte key (standard or URL
// alphabet, padded or not).
func DecodeKey(text string) ([]byte, error) { return keyfile.Decode(text) }

// EncodeKey is the base64 text of a key, as DecodeKey reads it.
func EncodeKey(key []byte) string { return keyfile.Encode(key) }

// GenerateKey returns a new random key.
func GenerateKey() ([]byte, error) {
	key, err := keyfile.Generate()
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return key, nil
}
