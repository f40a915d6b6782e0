package round

import (
	"slices"

	"github.com/toolround/toolround/internal/text"
)

// knownProviders are provider names that this project or its users write.
// The contract takes any name as a provider (every name but claude-code
// gets the short tools array), so the list only serves to catch typos: a
// name one edit from a known one (two for the long ones), or the same
// but for case, is refused with the known name.
var knownProviders = []string{"claude-code", "openai", "anthropic", "mistral", "gemini", "ollama", "deepseek", "bedrock", "openrouter"}

// CheckProvider refuses a provider name that is a near miss of a known one
// (CodeInvalidInput, with the known name); any other name, and none, pass.
func CheckProvider(p string) error {
	if p == "" || slices.Contains(knownProviders, p) {
		return nil
	}
	c := text.ClosestWithin(p, knownProviders, func(a, b string) int {
		if min(len(a), len(b)) >= 9 {
			return 2
		}
		return 1
	})
	if c == "" {
		return nil
	}
	return Errorf(CodeInvalidInput, "provider %q is a near miss of a known provider; did you mean %q? (a name far from every known one is taken as another provider, which gets the short tools array)", p, c)
}
