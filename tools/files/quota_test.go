package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// W3: with WORKSPACE_MAX_BYTES, a write past the limit is refused with
// workspace_full and leaves the file as it was, no temp file behind;
// versions count; once files are removed writes fit again.
func TestWriteRefusedPastTheWorkspaceLimit(t *testing.T) {
	e := newEnv(t, nil)
	e.wd.SetMaxBytes(20000)
	e.ok("edit_file", map[string]any{"path": "a.txt", "new_text": strings.Repeat("a", 8000)})
	_, err := e.call("edit_file", map[string]any{"path": "b.txt", "new_text": strings.Repeat("b", 13000)})
	require.Error(t, err)
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), err.Error())
	require.NoFileExists(t, filepath.Join(e.dir, "b.txt"))
	entries, err := os.ReadDir(e.dir)
	require.NoError(t, err)
	for _, en := range entries {
		require.False(t, strings.HasPrefix(en.Name(), ".tmp") || strings.Contains(en.Name(), "tmp-"), "a temp file was left: %s", en.Name())
	}

	// Overwriting a.txt keeps its old content as a version: 8000 + 10000 fits,
	// then a third 8000 does not, because the versions count.
	e.ok("edit_file", map[string]any{"path": "a.txt", "new_text": strings.Repeat("c", 10000)})
	_, err = e.call("edit_file", map[string]any{"path": "a.txt", "new_text": strings.Repeat("d", 8000)})
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "%v", err)
	got, err := os.ReadFile(filepath.Join(e.dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("c", 10000), string(got), "nothing half-written")

	// Past the limit (a command wrote a big file), every write is refused
	// until the workspace is under it again.
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "big"), make([]byte, 30000), 0o644))
	_, err = e.call("edit_file", map[string]any{"path": "tiny.txt", "new_text": "x"})
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "%v", err)
	require.NoError(t, os.Remove(filepath.Join(e.dir, "big")))
	e.ok("edit_file", map[string]any{"path": "tiny.txt", "new_text": "x"})
}
