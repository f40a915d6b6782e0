// Package secrets keeps store_secret values encrypted: AES-256-GCM sealing
// with a configured key, and a per-session store that implements tools.Secrets.
package secrets

import (
	"fmt"
	"os"

	"github.com/toolround/toolround/internal/keyfile"
)

// Environment variables read by ConfigFromEnv.
const (
	// EnvKey holds the base64 text of a 32-byte key.
	EnvKey = "TOOLROUND_SECRET_KEY"
	// EnvKeyFile names a file that holds the base64 key.
	EnvKeyFile = "TOOLROUND_SECRET_KEY_FILE"
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
}

// ConfigFromEnv reads TOOLROUND_SECRET_KEY and TOOLROUND_SECRET_KEY_FILE.
func ConfigFromEnv() Config {
	return Config{Key: os.Getenv(EnvKey), KeyFile: os.Getenv(EnvKeyFile)}
}

// secretKey is the secret key's file and errors.
var secretKey = keyfile.Kind{Prefix: "secrets: key", FileName: "secret.key", EnvKey: EnvKey, EnvFile: EnvKeyFile}

// DefaultKeyFile is $XDG_CONFIG_HOME/toolround/secret.key, or
// ~/.config/toolround/secret.key when XDG_CONFIG_HOME is not set.
func DefaultKeyFile() (string, error) { return secretKey.DefaultFile() }

// LoadKey returns the 32-byte key: Key when set, else the key file's,
// creating the file on first use.
func (c Config) LoadKey() ([]byte, error) { return secretKey.Load(c.Key, c.KeyFile) }

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
