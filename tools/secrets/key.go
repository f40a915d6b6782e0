// Package secrets keeps store_secret values encrypted: AES-256-GCM sealing
// with a configured key, and a per-session store that implements tools.Secrets.
package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables read by ConfigFromEnv.
const (
	// EnvKey holds the base64 text of a 32-byte key.
	EnvKey = "TOOLROUND_SECRET_KEY"
	// EnvKeyFile names a file that holds the base64 key.
	EnvKeyFile = "TOOLROUND_SECRET_KEY_FILE"
)

// KeySize is the length of an AES-256 key.
const KeySize = 32

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

// DefaultKeyFile is $XDG_CONFIG_HOME/toolround/secret.key, or
// ~/.config/toolround/secret.key when XDG_CONFIG_HOME is not set.
func DefaultKeyFile() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolround", "secret.key"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("secrets: default key file: %w; set %s or %s", err, EnvKey, EnvKeyFile)
	}
	return filepath.Join(home, ".config", "toolround", "secret.key"), nil
}

// LoadKey returns the 32-byte key: Key when set, else the key file's,
// creating the file on first use.
func (c Config) LoadKey() ([]byte, error) {
	if c.Key != "" {
		key, err := DecodeKey(c.Key)
		if err != nil {
			return nil, fmt.Errorf("secrets: %s: %w", EnvKey, err)
		}
		return key, nil
	}
	path := c.KeyFile
	if path == "" {
		p, err := DefaultKeyFile()
		if err != nil {
			return nil, err
		}
		path = p
	}
	key, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKeyFile(path)
	}
	return key, err
}

// DecodeKey parses the base64 text of a 32-byte key (standard or URL
// alphabet, padded or not).
func DecodeKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		key, err := enc.DecodeString(text)
		if err != nil {
			continue
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("key is %d bytes, want %d (the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)", len(key), KeySize)
		}
		return key, nil
	}
	return nil, errors.New("key is not base64 (want the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
}

// EncodeKey is the base64 text of a key, as DecodeKey reads it.
func EncodeKey(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// GenerateKey returns a new random key.
func GenerateKey() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secrets: generate key: %w", err)
	}
	return key, nil
}

func readKeyFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secrets: key file %s is open to other users (mode %04o); run chmod 600 on it", path, info.Mode().Perm())
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: read key file: %w", err)
	}
	key, err := DecodeKey(string(text))
	if err != nil {
		return nil, fmt.Errorf("secrets: key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key beside path and links it into place, so
// that two processes starting together end up with the same key: the one
// that loses the race reads the winner's file.
func createKeyFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secrets: create key folder: %w", err)
	}
	key, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".secret.key.*")
	if err != nil {
		return nil, fmt.Errorf("secrets: create key file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("secrets: create key file: %w", err)
	}
	if _, err := tmp.WriteString(EncodeKey(key) + "\n"); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("secrets: write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("secrets: write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("secrets: write key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("secrets: create key file: %w", err)
	}
	return key, nil
}
