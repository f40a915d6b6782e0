package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEStaysShort: the README is a front door, at most 300 lines; the
// rest belongs in docs/.
func TestREADMEStaysShort(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	n := strings.Count(string(b), "\n")
	require.LessOrEqual(t, n, 300, "README.md has %d lines: move detail into docs/", n)
}
