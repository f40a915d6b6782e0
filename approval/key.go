package approval

import (
	"os"

	"github.com/toolround/toolround/internal/keyfile"
)

// Environment variables read by KeyConfigFromEnv.
const (
	// EnvRuleKey holds the base64 text of the 32-byte key that signs the
	// allow rules of run states (T4).
	EnvRuleKey = "TOOLROUND_RULE_KEY"
	// EnvRuleKeyFile names a file that holds the base64 key.
	EnvRuleKeyFile = "TOOLROUND_RULE_KEY_FILE"
	// EnvRuleKeyPrevious holds the key being rotated out: rules and usage
	// it signed still verify, nothing new is signed with it.
	EnvRuleKeyPrevious = "TOOLROUND_RULE_KEY_PREVIOUS"
)

// KeySize is the length of a rule key.
const KeySize = keyfile.Size

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
	// Previous is the base64 text of the key being rotated out, or empty.
	Previous string
}

// KeyConfigFromEnv reads TOOLROUND_RULE_KEY, TOOLROUND_RULE_KEY_FILE and
// TOOLROUND_RULE_KEY_PREVIOUS.
func KeyConfigFromEnv() KeyConfig {
	return KeyConfig{Key: os.Getenv(EnvRuleKey), KeyFile: os.Getenv(EnvRuleKeyFile), Previous: os.Getenv(EnvRuleKeyPrevious)}
}

// ruleKey is the rule key's file and errors.
var ruleKey = keyfile.Kind{Prefix: "approval: rule key", FileName: "rule.key", EnvKey: EnvRuleKey, EnvFile: EnvRuleKeyFile}

// DefaultKeyFile is rule.key beside the secret key:
// $XDG_CONFIG_HOME/toolround/rule.key, or ~/.config/toolround/rule.key when
// XDG_CONFIG_HOME is not set.
func DefaultKeyFile() (string, error) { return ruleKey.DefaultFile() }

// LoadKey returns the 32-byte key: Key when set, else the key file's,
// creating the file on first use. It works as the secret key's file does
// (tools/secrets), with its own file: the two keys guard different things.
func (c KeyConfig) LoadKey() ([]byte, error) { return ruleKey.Load(c.Key, c.KeyFile) }

// LoadPrevious returns the previous key (nil when none is set).
func (c KeyConfig) LoadPrevious() ([]byte, error) { return ruleKey.LoadPrevious(c.Previous) }

// DecodeKey parses the base64 text of a 32-byte key (standard or URL
// alphabet, padded or not).
func DecodeKey(text string) ([]byte, error) { return keyfile.Decode(text) }
