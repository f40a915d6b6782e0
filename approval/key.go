package approval

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

// Environment variables read by KeyConfigFromEnv.
const (
	// EnvRuleKey holds the base64 text of the 32-byte key that signs the
	// allow rules of run states (T4).
	EnvRuleKey = "TOOLROUND_RULE_KEY"
	// EnvRuleKeyFile names a file that holds the base64 key.
	EnvRuleKeyFile = "TOOLROUND_RULE_KEY_FILE"
)

// KeySize is the length of a rule key.
const KeySize = 32

// KeyConfig says where the rule key comes from. Only workers hold it: a
// client that could sign rules could forge approvals in the state it sends.
// Every worker of a task queue must load the same key: on more than one
// machine, set Key.
type KeyConfig struct {
	// Key is the base64 text of a 32-byte key. Empty: the key is read from
	// KeyFile.
	Key string
	// KeyFile holds the base64 key. It is created with a new random key,
	// mode 0600 in a 0700 folder, when it does not exist yet.
	// Empty: DefaultKeyFile().
	KeyFile string
}

// KeyConfigFromEnv reads TOOLROUND_RULE_KEY and TOOLROUND_RULE_KEY_FILE.
func KeyConfigFromEnv() KeyConfig {
	return KeyConfig{Key: os.Getenv(EnvRuleKey), KeyFile: os.Getenv(EnvRuleKeyFile)}
}

// DefaultKeyFile is rule.key beside the secret key:
// $XDG_CONFIG_HOME/toolround/rule.key, or ~/.config/toolround/rule.key when
// XDG_CONFIG_HOME is not set.
func DefaultKeyFile() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolround", "rule.key"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("approval: default rule key file: %w; set %s or %s", err, EnvRuleKey, EnvRuleKeyFile)
	}
	return filepath.Join(home, ".config", "toolround", "rule.key"), nil
}

// LoadKey returns the 32-byte key: Key when set, else the key file's,
// creating the file on first use. It works as the secret key's file does
// (tools/secrets), with its own file: the two keys guard different things.
func (c KeyConfig) LoadKey() ([]byte, error) {
	if c.Key != "" {
		key, err := DecodeKey(c.Key)
		if err != nil {
			return nil, fmt.Errorf("approval: %s: %w", EnvRuleKey, err)
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

func readKeyFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("approval: rule key file %s is open to other users (mode %04o); run chmod 600 on it", path, info.Mode().Perm())
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("approval: read rule key file: %w", err)
	}
	key, err := DecodeKey(string(text))
	if err != nil {
		return nil, fmt.Errorf("approval: rule key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key beside path and links it into place, so
// that two workers starting together end up with the same key: the one that
// loses the race reads the winner's file.
func createKeyFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("approval: create rule key folder: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("approval: generate rule key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".rule.key.*")
	if err != nil {
		return nil, fmt.Errorf("approval: create rule key file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("approval: write rule key file: %w", werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("approval: create rule key file: %w", err)
	}
	return key, nil
}
