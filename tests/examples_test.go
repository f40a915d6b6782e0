package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAdapterExamplesForgeNothing: the Python and TypeScript examples pass
// no run state of their own (a "fetched" list would claim schemas the run
// never loaded: find_tools loads them, S4) and write no tool schema by hand
// (the server's come from tools(), or the adapter needs none). The tests
// that run them are TestPythonAdapters and TestTypeScriptAdapters.
func TestAdapterExamplesForgeNothing(t *testing.T) {
	files, err := filepath.Glob("../examples/python/*.py")
	require.NoError(t, err)
	ts, err := filepath.Glob("../examples/typescript/*.mjs")
	require.NoError(t, err)
	files = append(files, ts...)
	require.GreaterOrEqual(t, len(files), 6)
	forged := regexp.MustCompile(`fetched|\bstate\s*[=:]\s*\{`)
	handWritten := regexp.MustCompile(`"parameters"\s*:|\bparameters\s*:\s*\{`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotRegexp(t, forged, string(b), "%s passes run state of its own", f)
		require.NotRegexp(t, handWritten, string(b), "%s writes a tool schema by hand", f)
	}
}
