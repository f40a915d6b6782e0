// Package keyfile loads the project's 32-byte keys (the secret key, the rule
// key): from base64 text, or from a file created with a new random key on
// first use.
package keyfile

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

// Size is the length of a key.
const Size = 32

// Kind names one key: the words its errors start with and the file it is
// kept in by default.
type Kind struct {
	// Prefix starts every error ("secrets: key", "approval: rule key").
	Prefix string
	// FileName is the default file in the toolround config folder.
	FileName string
	// EnvKey and EnvFile are the variables that set the key or its file,
	// named in errors.
	EnvKey, EnvFile string
}

// DefaultFile is $XDG_CONFIG_HOME/toolround/<FileName>, or
// ~/.config/toolround/<FileName> when XDG_CONFIG_HOME is not set.
func (k Kind) DefaultFile() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolround", k.FileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: default file: %w; set %s or %s", k.Prefix, err, k.EnvKey, k.EnvFile)
	}
	return filepath.Join(home, ".config", "toolround", k.FileName), nil
}

// Load returns the key: text decoded when set, else the file's (path, or
// DefaultFile when empty), creating the file on first use, mode 0600 in a
// 0700 folder.
func (k Kind) Load(text, path string) ([]byte, error) {
	if text != "" {
		key, err := Decode(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", k.Prefix, k.EnvKey, err)
		}
		return key, nil
	}
	if path == "" {
		p, err := k.DefaultFile()
		if err != nil {
			return nil, err
		}
		path = p
	}
	key, err := k.read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return k.create(path)
	}
	return key, err
}

// PreviousSuffix ends the variable that holds a key being rotated out:
// TOOLROUND_RULE_KEY_PREVIOUS beside TOOLROUND_RULE_KEY. What the previous
// key signed or sealed is still accepted; nothing new is signed or sealed
// with it.
const PreviousSuffix = "_PREVIOUS"

// LoadPrevious decodes the previous key's text (the variable
// EnvKey+PreviousSuffix); empty text is no previous key (nil).
func (k Kind) LoadPrevious(text string) ([]byte, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	key, err := Decode(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %s%s: %w", k.Prefix, k.EnvKey, PreviousSuffix, err)
	}
	return key, nil
}

// Decode parses the base64 text of a key (standard or URL alphabet, padded
// or not).
func Decode(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		key, err := enc.DecodeString(text)
		if err != nil {
			continue
		}
		if len(key) != Size {
			return nil, fmt.Errorf("key is %d bytes, want %d (the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)", len(key), Size)
		}
		return key, nil
	}
	return nil, errors.New("key is not base64 (want the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
}

// Encode is the base64 text of a key, as Decode reads it.
func Encode(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// Generate returns a new random key.
func Generate() ([]byte, error) {
	key := make([]byte, Size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

func (k Kind) read(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s file %s is open to other users (mode %04o); run chmod 600 on it", k.Prefix, path, info.Mode().Perm())
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: read file: %w", k.Prefix, err)
	}
	key, err := Decode(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s file %s: %w", k.Prefix, path, err)
	}
	return key, nil
}

// create writes a new key beside path and links it into place, so that two
// processes starting together end up with the same key: the one that loses
// the race reads the winner's file.
func (k Kind) create(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: create folder: %w", k.Prefix, err)
	}
	key, err := Generate()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Prefix, err)
	}
	tmp, err := os.CreateTemp(dir, "."+k.FileName+".*")
	if err != nil {
		return nil, fmt.Errorf("%s: create file: %w", k.Prefix, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.WriteString(Encode(key) + "\n")
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("%s: write file: %w", k.Prefix, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return k.read(path)
		}
		return nil, fmt.Errorf("%s: create file: %w", k.Prefix, err)
	}
	return key, nil
}
