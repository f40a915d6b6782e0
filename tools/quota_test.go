package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// W3: a workspace's usage counts its files, versions and background
// output; a capped reader stops a write past WORKSPACE_MAX_BYTES with the
// workspace_full code.
func TestWorkspaceQuota(t *testing.T) {
	w := openSessions(t)
	w.SetMaxBytes(100)
	s, err := w.Session("s")
	require.NoError(t, err)
	require.Equal(t, int64(100), s.MaxBytes())
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "a"), make([]byte, 30), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), ReservedDir, "v"), make([]byte, 20), 0o644))
	used, err := s.Usage()
	require.NoError(t, err)
	require.Equal(t, int64(50), used)

	r, err := s.Capped(strings.NewReader(strings.Repeat("x", 50)))
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err, "exactly the room left fits")
	require.Len(t, b, 50)

	r, err = s.Capped(strings.NewReader(strings.Repeat("x", 51)))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.Error(t, err)
	require.Equal(t, CodeWorkspaceFull, ErrorCode(err))
	require.Equal(t, CodeWorkspaceFull, ErrorCode(fmt.Errorf("edit: %w", err)), "the code survives wrapping")
	require.Contains(t, err.Error(), "WORKSPACE_MAX_BYTES")

	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "b"), make([]byte, 60), 0o644))
	_, err = s.Capped(bytes.NewReader(nil))
	require.Equal(t, CodeWorkspaceFull, ErrorCode(err), "over the limit, every write is refused")
	require.Equal(t, "", ErrorCode(errors.New("plain")))

	unlimited := openSessions(t)
	u, err := unlimited.Session("s")
	require.NoError(t, err)
	r, err = u.Capped(strings.NewReader("anything"))
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.NoError(t, err)
}
