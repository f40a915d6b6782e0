//go:build linux

// The guarantees checked here hold where folders are opened by descriptor
// (folder_linux.go).

package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/seam"
	"github.com/toolround/toolround/tools"
)

// swapFolder keeps replacing the workdir folder rel with a symbolic link to
// to and back, holding each state a random while, until the returned stop
// is called. It counts the swaps.
func swapFolder(t *testing.T, e *env, rel, to string) (stop func() int) {
	t.Helper()
	var done atomic.Bool
	var swaps int
	var wg sync.WaitGroup
	d, real := e.abs(rel), e.abs(rel+".real")
	require.NoError(t, os.MkdirAll(d, 0o755))
	wg.Go(func() {
		for !done.Load() {
			_ = os.RemoveAll(real)
			if os.Rename(d, real) != nil {
				continue
			}
			_ = os.Symlink(to, d)
			swaps++
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			_ = os.Remove(d)
			if os.Rename(real, d) != nil {
				// A tool made the folder meanwhile; put the real one back anyway.
				_ = os.RemoveAll(d)
				_ = os.Rename(real, d)
			}
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond)
		}
	})
	return func() int {
		done.Store(true)
		wg.Wait()
		return swaps
	}
}

// treeState maps every path under dir to its content (folders and links to
// a marker), to tell whether anything under it changed.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			out[rel] = "link to " + to
		case d.IsDir():
			out[rel] = "folder"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	}))
	return out
}

// requireReservedIntact checks the reserved folder after an attack: only
// the files the tools keep there, every version index whole and in its own
// folder, every kept version's content matching its record.
func requireReservedIntact(t *testing.T, e *env) {
	t.Helper()
	reserved := e.abs(tools.ReservedDir)
	var stray []string
	var indexes []string
	require.NoError(t, walkAll(reserved, func(p string) {
		rel, _ := filepath.Rel(reserved, p)
		parts := strings.Split(rel, string(filepath.Separator))
		base := parts[len(parts)-1]
		switch {
		case rel == "." || rel == "versions" || rel == "versions.lock" || rel == "ops":
		case len(parts) == 2 && parts[0] == "ops" && len(base) == 32+len(".lock") && (strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, ".json")):
		case len(parts) == 2 && parts[0] == "versions" && len(base) == 32 && isDir(p):
		case len(parts) == 3 && parts[0] == "versions" && base == "index.json":
			indexes = append(indexes, p)
		case len(parts) == 3 && parts[0] == "versions" && isNumber(base):
		default:
			stray = append(stray, rel)
		}
	}))
	require.Empty(t, stray, "files left in %s/", tools.ReservedDir)
	for _, p := range indexes {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var idx versionIndex
		require.NoError(t, json.Unmarshal(data, &idx), "version index %s is damaged", p)
		sum := sha256.Sum256([]byte(idx.Path))
		dir := filepath.Dir(p)
		require.Equal(t, hex.EncodeToString(sum[:16]), filepath.Base(dir), "version index %s holds the index of %s", p, idx.Path)
		last := 0
		for _, v := range idx.Versions {
			require.Greater(t, v.N, last, "versions of %s out of order", idx.Path)
			require.Less(t, v.N, idx.Next, "version %d of %s is not below next", v.N, idx.Path)
			last = v.N
			if v.Absent || v.Dropped {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(v.N)))
			require.NoError(t, err, "content of version %d of %s", v.N, idx.Path)
			require.Equal(t, v.SHA256, hashBytes(b), "content of version %d of %s does not match its record", v.N, idx.Path)
		}
	}
}

// requireNoTempFiles checks that no temp file of the tools is left under dir.
func requireNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	var left []string
	require.NoError(t, walkAll(dir, func(p string) {
		if strings.HasPrefix(filepath.Base(p), ".toolround-tmp-") || strings.HasSuffix(p, ".tmp") {
			left = append(left, p)
		}
	}))
	require.Empty(t, left, "temp files left")
}

// swapAttack is one attack: calls of a tool on d/<name> while d keeps
// turning into a symbolic link to a folder the tools must not change.
type swapAttack struct {
	name string
	// prepare runs before each call (with the folder being swapped), call
	// is the attacked call.
	prepare func(e *env, i int)
	call    func(e *env, i int) error
}

// runSwapAttack runs attack against each folder a link may lead to: one
// outside the workdir, the reserved folder, and the version folder of
// another file, whose index and content the attacked file's name matches.
func runSwapAttack(t *testing.T, a swapAttack) {
	const calls = 200
	for _, to := range []string{"outside", "reserved", "versions of victim.txt"} {
		t.Run(strings.ReplaceAll(to, " ", "_"), func(t *testing.T) {
			e := newEnv(t, nil)
			outside := filepath.Join(filepath.Dir(e.dir), "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			for _, n := range []string{"index.json", "1", "2", "f.txt"} {
				require.NoError(t, os.WriteFile(filepath.Join(outside, n), []byte("outside "+n+"\n"), 0o644))
			}
			e.ok("edit_file", m{"path": "victim.txt", "new_text": "victim 1\n"})
			e.ok("edit_file", m{"path": "victim.txt", "new_text": "victim 2\n"})
			victimDir := e.abs(newStore(nil, 0, 0, nil).dir("victim.txt"))
			require.FileExists(t, filepath.Join(victimDir, "index.json"))
			link := swapLink(t, e, to, outside)
			outsideBefore, victimBefore := treeState(t, outside), treeState(t, victimDir)

			stop := swapFolder(t, e, "d", link)
			ok := 0
			for i := range calls {
				if a.prepare != nil {
					a.prepare(e, i)
				}
				if a.call(e, i) == nil {
					ok++
				}
			}
			swaps := stop()
			t.Logf("%s: %d of %d calls succeeded during %d swaps of d to a link to %s", a.name, ok, calls, swaps, to)

			require.Equal(t, outsideBefore, treeState(t, outside), "the folder outside the workdir changed")
			require.Equal(t, victimBefore, treeState(t, victimDir), "the versions of another file changed")
			requireReservedIntact(t, e)
			requireNoTempFiles(t, filepath.Dir(e.dir))
		})
	}
}

// swapLink is what the link that replaces d holds: the absolute path of a
// folder outside the workdir, or a relative path to a reserved folder (an
// absolute one the workdir's os.Root would refuse whatever the tools do).
func swapLink(t *testing.T, e *env, to, outside string) string {
	t.Helper()
	switch to {
	case "outside":
		return outside
	case "reserved":
		return tools.ReservedDir
	case "versions of victim.txt":
		return newStore(nil, 0, 0, nil).dir("victim.txt")
	}
	t.Fatalf("no link %q", to)
	return ""
}

// opCall runs a tool as the engine does for a side-effecting call: under
// an operation id, so its operation lock and record are made too.
func (e *env) opCall(name string, i int, args m) error {
	_, err := e.defs[name].Handler(context.Background(), tools.Request{
		Tool: name, CallID: fmt.Sprintf("c%d", i), OperationID: fmt.Sprintf("op-%s-%d", name, i), Args: rawArgs(e.t, args)})
	return err
}

func editIndex(e *env, i int) {
	_ = e.opCall("edit_file", 100000+i, m{"path": "d/index.json", "new_text": fmt.Sprintf("edit %d\n", i)})
}

func TestDownloadWithSwappedSymlink(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("downloaded " + r.URL.Path + "\n"))
	}))
	t.Cleanup(srv.Close)
	runSwapAttack(t, swapAttack{name: "download_file", call: func(e *env, i int) error {
		return e.opCall("download_file", i, m{"url": fmt.Sprintf("%s/%d", srv.URL, i), "path": "d/index.json"})
	}})
}

func TestRestoreWithSwappedSymlink(t *testing.T) {
	runSwapAttack(t, swapAttack{name: "restore_file", prepare: editIndex, call: func(e *env, i int) error {
		return e.opCall("restore_file", i, m{"path": "d/index.json"})
	}})
}

func TestRemoveWithSwappedSymlink(t *testing.T) {
	runSwapAttack(t, swapAttack{name: "remove_file", prepare: editIndex, call: func(e *env, i int) error {
		return e.opCall("remove_file", i, m{"path": "d/index.json"})
	}})
}

// TestRemoveFolderWithSwappedSymlink removes the folder that keeps turning
// into a link: the files seen through the link must not be removed.
func TestRemoveFolderWithSwappedSymlink(t *testing.T) {
	runSwapAttack(t, swapAttack{name: "remove_file (folder)", prepare: editIndex, call: func(e *env, i int) error {
		return e.opCall("remove_file", i, m{"path": "d"})
	}})
}

func TestEditWithSwappedSymlink(t *testing.T) {
	runSwapAttack(t, swapAttack{name: "edit_file", call: func(e *env, i int) error {
		return e.opCall("edit_file", i, m{"path": "d/index.json", "new_text": fmt.Sprintf("edit %d\n", i)})
	}})
}

// TestSwapAtTheWrite swaps the folder at the worst moment, as an attacker
// with perfect timing would: after the tool checked the path and just before
// it keeps the version and changes the file.
func TestSwapAtTheWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("downloaded\n"))
	}))
	t.Cleanup(srv.Close)
	calls := []struct {
		tool string
		args m
		// after is what d.real/index.json, the folder the call opened
		// before the swap, holds afterwards ("" for no file).
		after string
	}{
		{"edit_file", m{"path": "d/index.json", "new_text": "new\n"}, "new\n"},
		{"download_file", m{"url": srv.URL + "/x", "path": "d/index.json"}, "downloaded\n"},
		{"restore_file", m{"path": "d/index.json"}, "one\n"},
		{"remove_file", m{"path": "d/index.json"}, ""},
	}
	for _, c := range calls {
		for _, to := range []string{"outside", "reserved", "versions of victim.txt"} {
			t.Run(c.tool+"/"+strings.ReplaceAll(to, " ", "_"), func(t *testing.T) {
				e := newEnv(t, nil)
				outside := filepath.Join(filepath.Dir(e.dir), "outside")
				require.NoError(t, os.MkdirAll(outside, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(outside, "index.json"), []byte("outside\n"), 0o644))
				e.ok("edit_file", m{"path": "victim.txt", "new_text": "victim 1\n"})
				e.ok("edit_file", m{"path": "victim.txt", "new_text": "victim 2\n"})
				victimDir := e.abs(newStore(nil, 0, 0, nil).dir("victim.txt"))
				e.ok("edit_file", m{"path": "d/index.json", "new_text": "one\n"})
				e.ok("edit_file", m{"path": "d/index.json", "new_text": "two\n"})
				link := swapLink(t, e, to, outside)
				outsideBefore, victimBefore := treeState(t, outside), treeState(t, victimDir)

				swapped := false
				ctx := seam.WithCheckpoint(context.Background(), func(p string) {
					if p == c.tool+":before_write" {
						require.NoError(t, os.Rename(e.abs("d"), e.abs("d.real")))
						require.NoError(t, os.Symlink(link, e.abs("d")))
						swapped = true
					}
				})
				_, err := e.defs[c.tool].Handler(ctx, tools.Request{Tool: c.tool, CallID: "c", OperationID: "op-" + c.tool, Args: rawArgs(t, c.args)})
				require.True(t, swapped, "the call never reached its write")
				require.NoError(t, err)
				got, err := os.ReadFile(e.abs("d.real/index.json"))
				if c.after == "" {
					require.ErrorIs(t, err, os.ErrNotExist, "the file was not removed from the folder the call opened")
				} else {
					require.NoError(t, err)
					require.Equal(t, c.after, string(got), "the change did not land in the folder the call opened")
				}

				require.Equal(t, outsideBefore, treeState(t, outside), "the folder outside the workdir changed")
				require.Equal(t, victimBefore, treeState(t, victimDir), "the versions of another file changed")
				requireReservedIntact(t, e)
				requireNoTempFiles(t, filepath.Dir(e.dir))
				// A version keeps what the file held, never what the link
				// led to.
				for n, content := range treeState(t, e.abs(newStore(nil, 0, 0, nil).dir("d/index.json"))) {
					if isNumber(n) {
						require.Contains(t, []string{"one\n", "two\n"}, content, "version %s of d/index.json holds something it never held", n)
					}
				}
			})
		}
	}
}
