package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPreviewFileShowsSizeAndFirstLines(t *testing.T) {
	e := newEnv(t, nil)
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte(b.String()), 0o644))
	p, err := PreviewFile(e.wd, "notes.txt")
	require.NoError(t, err)
	require.True(t, p.Exists)
	require.Equal(t, int64(b.Len()), p.Size)
	require.Len(t, p.Lines, PreviewLines)
	require.Equal(t, "line 1", p.Lines[0])
	require.Equal(t, "line 20", p.Lines[19])
	require.True(t, p.More)
}

func TestPreviewFileOfAShortFileHasNoMore(t *testing.T) {
	e := newEnv(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("one\ntwo"), 0o644))
	p, err := PreviewFile(e.wd, "a.txt")
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two"}, p.Lines)
	require.False(t, p.More)
}

func TestPreviewFileOfAMissingFileSaysItDoesNotExist(t *testing.T) {
	e := newEnv(t, nil)
	p, err := PreviewFile(e.wd, "new/file.txt")
	require.NoError(t, err)
	require.False(t, p.Exists)
}

func TestPreviewFileOfAKeyFileShowsOnlyItsSize(t *testing.T) {
	e := newEnv(t, nil)
	for _, name := range []string{".env", "deploy.pem", "id_ed25519"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, name), []byte("TOKEN=abcdefgh\n"), 0o600))
		p, err := PreviewFile(e.wd, name)
		require.NoError(t, err, name)
		require.Equal(t, Preview{Exists: true, Size: 15, KeyFile: true}, p, name)
	}
	// A link with an innocent name to a key file shows only its size too.
	require.NoError(t, os.Symlink(".env", filepath.Join(e.dir, "settings.txt")))
	p, err := PreviewFile(e.wd, "settings.txt")
	require.NoError(t, err)
	require.True(t, p.KeyFile)
	require.Empty(t, p.Lines)
}

func TestPreviewFileRefusesWhatEditFileRefuses(t *testing.T) {
	e := newEnv(t, nil)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("not yours\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.dir, "out")))
	for _, p := range []string{"../outside.txt", outside, "out", ".toolround/x", "."} {
		_, err := PreviewFile(e.wd, p)
		require.Error(t, err, p)
		_, err = e.call("edit_file", map[string]any{"path": p, "new_text": "x"})
		require.Error(t, err, p)
	}
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "not yours\n", string(got))
}

func TestPreviewFileOfBinaryOrLongLines(t *testing.T) {
	e := newEnv(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "b.bin"), []byte("ab\x00cd\n"), 0o644))
	p, err := PreviewFile(e.wd, "b.bin")
	require.NoError(t, err)
	require.True(t, p.Binary)
	require.Empty(t, p.Lines)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "long.txt"), []byte(strings.Repeat("é", 1000)+"\n"), 0o644))
	p, err = PreviewFile(e.wd, "long.txt")
	require.NoError(t, err)
	require.Len(t, p.Lines, 1)
	require.LessOrEqual(t, len(p.Lines[0]), previewLineMax+len(" …"))
	require.True(t, strings.HasSuffix(p.Lines[0], " …"))
}
