package approval

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestID(t *testing.T) {
	base := ID("toolround/s/r/1", "call_1", "run_command", `{"command":"ls"}`)
	require.Len(t, base, 64)
	require.Equal(t, base, ID("toolround/s/r/1", "call_1", "run_command", `{"command":"ls"}`), "stable")
	for _, other := range []string{
		ID("toolround/s/r/2", "call_1", "run_command", `{"command":"ls"}`),
		ID("toolround/s/r/1", "call_2", "run_command", `{"command":"ls"}`),
		ID("toolround/s/r/1", "call_1", "background_command", `{"command":"ls"}`),
		ID("toolround/s/r/1", "call_1", "run_command", `{"command":"ls "}`),
		// Moving bytes between fields changes the id: the fields are length-prefixed.
		ID("toolround/s/r/1call_1", "", "run_command", `{"command":"ls"}`),
		ID("toolround/s/r/1", "call_1run_command", "", `{"command":"ls"}`),
	} {
		require.NotEqual(t, base, other)
	}
}

func TestSignVerify(t *testing.T) {
	key := testKey(1)
	r := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git *"})
	require.NotEmpty(t, r.MAC)
	require.True(t, Verify(key, "s1", "r1", r))

	tampered := []Rule{
		{Tool: "run_command", Pattern: "git *"},                            // no MAC: forged
		{Tool: "run_command", Pattern: "git *", MAC: "AAAA"},               // garbage MAC
		{Tool: "run_command", Pattern: "git *", MAC: "not base64 !"},       // not even base64
		{Tool: "run_command", Pattern: "*", MAC: r.MAC},                    // pattern changed
		{Tool: "background_command", Pattern: "git *", MAC: r.MAC},         // tool changed
		{Tool: "run_command", Pattern: "git *", Args: "{}", MAC: r.MAC},    // args added
		{Tool: "run_command", Pattern: "git *", Secret: "KEY", MAC: r.MAC}, // secret added
		{Tool: "run_command", Pattern: "git", MAC: r.MAC},                  // pattern shortened
		{Tool: "run_command", Pattern: "git *", MAC: r.MAC + "A"},          // MAC extended
	}
	for _, bad := range tampered {
		require.False(t, Verify(key, "s1", "r1", bad), "%+v", bad)
	}
	require.False(t, Verify(key, "s1", "r2", r), "copied from another run")
	require.False(t, Verify(key, "s2", "r1", r), "copied from another session")
	// Length prefixes: moving a byte from session to run is another binding.
	require.False(t, Verify(key, "s", "1r1", r))
	require.False(t, Verify(testKey(2), "s1", "r1", r), "another worker key")
	require.False(t, Verify(nil, "s1", "r1", Sign(nil, "s1", "r1", r)), "no key signs nothing")
	require.False(t, Verify([]byte("short"), "s1", "r1", Sign([]byte("short"), "s1", "r1", r)))

	// A forged state with allow rules acts like an empty one.
	var state []Rule
	require.NoError(t, json.Unmarshal([]byte(`[{"tool":"run_command","pattern":"*"},{"tool":"run_command","pattern":"git *","mac":"`+r.MAC+`x"}]`), &state))
	require.Empty(t, Verified(key, "s1", "r1", state))
	require.Equal(t, []Rule{r}, Verified(key, "s1", "r1", append(state, r)))
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "rule.key")
	k1, err := KeyConfig{KeyFile: path}.LoadKey()
	require.NoError(t, err)
	require.Len(t, k1, KeySize)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	k2, err := KeyConfig{KeyFile: path}.LoadKey()
	require.NoError(t, err)
	require.Equal(t, k1, k2, "created once, then read")

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = KeyConfig{KeyFile: path}.LoadKey()
	require.ErrorContains(t, err, "chmod 600")

	k3, err := KeyConfig{Key: "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="}.LoadKey()
	require.NoError(t, err)
	require.Equal(t, testKey(1), k3)
	_, err = KeyConfig{Key: "c2hvcnQ="}.LoadKey()
	require.ErrorContains(t, err, EnvRuleKey)

	t.Setenv("XDG_CONFIG_HOME", dir)
	p, err := DefaultKeyFile()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "toolround", "rule.key"), p)
	t.Setenv(EnvRuleKey, "k")
	t.Setenv(EnvRuleKeyFile, "f")
	require.Equal(t, KeyConfig{Key: "k", KeyFile: "f"}, KeyConfigFromEnv())
}

// TestUpToIsCoveredByTheMAC (B2): a counted rule's bound is part of what
// its MAC signs; removing or raising it makes the rule fail, and a rule
// without a bound keeps the MAC it had before bounds existed.
func TestUpToIsCoveredByTheMAC(t *testing.T) {
	key := testKey(2)
	r := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git *", UpTo: 20})
	require.True(t, Verify(key, "s1", "r1", r))
	for _, bad := range []Rule{
		{Tool: "run_command", Pattern: "git *", MAC: r.MAC},           // bound removed
		{Tool: "run_command", Pattern: "git *", UpTo: 21, MAC: r.MAC}, // bound raised
	} {
		require.False(t, Verify(key, "s1", "r1", bad), "%+v", bad)
	}
	plain := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git *"})
	require.NotEqual(t, plain.MAC, r.MAC)
	require.Equal(t, "sd-TKSl1q-ovWne3jR50aywX0PSvVw3V2C9G66muMgY", plain.MAC, "an unbounded rule's MAC is that of rule v1")
}

// TestScopeIsCoveredByTheMAC (T12): a rule's scope is part of what its MAC
// signs; widening read-only to write, or dropping the scope, fails Verify,
// and a rule without a scope keeps the MAC of rule v1.
func TestScopeIsCoveredByTheMAC(t *testing.T) {
	key := testKey(2)
	r := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git status *", Scope: ScopeReadOnly})
	require.True(t, Verify(key, "s1", "r1", r))
	for _, bad := range []Rule{
		{Tool: "run_command", Pattern: "git status *", MAC: r.MAC},                    // scope dropped
		{Tool: "run_command", Pattern: "git status *", Scope: ScopeWrite, MAC: r.MAC}, // scope widened
	} {
		require.False(t, Verify(key, "s1", "r1", bad), "%+v", bad)
	}
	both := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git status *", Scope: ScopeWrite, UpTo: 3})
	require.False(t, Verify(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git status *", Scope: ScopeWrite, MAC: both.MAC}))
	plain := Sign(key, "s1", "r1", Rule{Tool: "run_command", Pattern: "git *"})
	require.Equal(t, "sd-TKSl1q-ovWne3jR50aywX0PSvVw3V2C9G66muMgY", plain.MAC, "a rule without a scope keeps the MAC of rule v1")
}

// TestRuleScopeDefaults (T12): a rule without a scope (stored before T11)
// runs with write; a rule remembered without one is read-only when the
// approved call is a read-only form, else write; a rule over a program that
// runs the workspace's code is write whatever was asked.
func TestRuleScopeDefaults(t *testing.T) {
	require.Equal(t, ScopeWrite, Rule{Tool: "run_command", Pattern: "ls *"}.EffectiveScope())
	require.Equal(t, ScopeReadOnly, Rule{Tool: "run_command", Pattern: "ls *", Scope: ScopeReadOnly}.EffectiveScope())

	cmd := func(c string) string { return `{"command":"` + c + `"}` }
	for _, tc := range []struct {
		kind          Kind
		tool, args    string
		pattern, want string
		asked         string
	}{
		{KindCommand, "run_command", cmd("ls -la"), "ls *", ScopeReadOnly, ""},
		{KindCommand, "run_command", cmd("git status"), "git status *", ScopeReadOnly, ""},
		{KindCommand, "run_command", cmd("sed -i s/a/b/ x.txt"), "sed *", ScopeWrite, ""},
		{KindCommand, "run_command", cmd("ls > out.txt"), "", ScopeWrite, ""},
		{KindCommand, "run_command", cmd("sed -i s/a/b/ x.txt"), "sed *", ScopeReadOnly, ScopeReadOnly},
		{KindCommand, "run_command", cmd("ls"), "ls *", ScopeWrite, ScopeWrite},
		{KindCommand, "run_command", cmd("python3 x.py"), "python3 *", ScopeWrite, ScopeReadOnly},
		{KindPath, "read_file", `{"path":"a.txt"}`, "", ScopeReadOnly, ""},
		{KindPath, "write_file", `{"path":"a.txt","content":"x"}`, "", ScopeWrite, ""},
	} {
		rules, err := RememberScoped(TablesCurrent, tc.kind, tc.tool, tc.args, tc.pattern, tc.asked, tc.tool == "read_file")
		require.NoError(t, err, "%+v", tc)
		for _, r := range rules {
			require.Equal(t, tc.want, r.Scope, "%+v", tc)
		}
	}
	_, err := RememberScoped(TablesCurrent, KindCommand, "run_command", cmd("ls"), "ls *", "everything", false)
	require.ErrorContains(t, err, "scope")
}
