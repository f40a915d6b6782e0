package files

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// TestReadFilesRecordsFileStates: read_files records, outside its content,
// the state of each path it read (U3), and Changed finds what changed since.
func TestReadFilesRecordsFileStates(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "alpha\n")
	e.write("src/b.txt", "beta\n")
	e.write("big.txt", "x")
	res := e.ok("read_files", m{"paths": []string{"a.txt", "./src", "missing.txt", "big.txt"}})
	require.Equal(t, []string{"a.txt", "big.txt", "missing.txt", "src"}, sortedKeysOf(res.Files))
	a := res.Files["a.txt"]
	require.EqualValues(t, 6, a.Size)
	require.Len(t, a.SHA256, 64)
	require.NotZero(t, a.ModTime)
	require.Equal(t, tools.FileState{Missing: true}, res.Files["missing.txt"])
	require.EqualValues(t, 1, res.Files["src"].Size, "a folder records its number of entries")
	require.NotContains(t, res.Content, a.SHA256, "the states stay out of what the model sees")

	changed := e.defs["read_files"].Changed
	require.NotNil(t, changed)
	ctx := context.Background()
	require.Empty(t, changed(ctx, res.Files), "nothing changed")

	// Same size, same time, other content: the digest tells.
	fi, err := os.Stat(e.abs("a.txt"))
	require.NoError(t, err)
	e.write("a.txt", "ALPHA\n")
	require.NoError(t, os.Chtimes(e.abs("a.txt"), fi.ModTime(), fi.ModTime()))
	// The time alone.
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(e.abs("big.txt"), later, later))
	// A new entry in a folder, a file that appeared.
	e.write("src/c.txt", "gamma\n")
	e.write("missing.txt", "here now\n")
	require.Equal(t, []string{"a.txt", "big.txt", "missing.txt", "src"}, changed(ctx, res.Files))

	// A path that could not be looked at never counts as unchanged.
	require.Equal(t, []string{"x"}, changed(ctx, map[string]tools.FileState{"x": unreadable}))
}

func sortedKeysOf(m map[string]tools.FileState) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
