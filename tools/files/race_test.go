package files

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// TestEditWithSwappedSymlinkLeavesNothingInReserved edits d/f.txt while
// another process keeps swapping d between a folder and a symlink to the
// reserved versions folder: whatever the edits do, no file of theirs may
// land in .toolround/.
func TestEditWithSwappedSymlinkLeavesNothingInReserved(t *testing.T) {
	e := newEnv(t, nil)
	e.write("d/f.txt", "start\n")
	e.ok("edit_file", m{"path": "other.txt", "new_text": "makes the versions folder"})
	versions := e.abs(".toolround/versions")
	require.DirExists(t, versions)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		d, real := e.abs("d"), e.abs("d.real")
		for !stop.Load() {
			_ = os.RemoveAll(real)
			if os.Rename(d, real) != nil {
				continue
			}
			_ = os.Symlink(".toolround/versions", d)
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) // hold each state a varying while
			_ = os.Remove(d)
			if os.Rename(real, d) != nil {
				// An edit made d meanwhile; put the folder back anyway.
				_ = os.RemoveAll(d)
				_ = os.Rename(real, d)
			}
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		}
	})
	okEdits := 0
	for i := range 800 {
		if _, err := e.call("edit_file", m{"path": "d/f.txt", "new_text": fmt.Sprintf("edit %d\n", i)}); err == nil {
			okEdits++
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d of 800 edits succeeded while the folder was being swapped", okEdits)

	var stray []string
	require.NoError(t, walkAll(e.abs(".toolround"), func(p string) {
		rel, _ := filepath.Rel(e.abs(".toolround"), p)
		parts := strings.Split(rel, string(filepath.Separator))
		base := parts[len(parts)-1]
		switch {
		case rel == "." || rel == "versions" || rel == "versions.lock":
		case len(parts) == 2 && parts[0] == "versions" && len(base) == 32 && isDir(p):
			// one folder per file, named by a hash of its path
		case len(parts) == 3 && parts[0] == "versions" && (base == "index.json" || isNumber(base)):
		default:
			stray = append(stray, rel)
		}
	}))
	require.Empty(t, stray, "files left in .toolround/")
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

const helperEnv = "TOOLROUND_FILES_EDIT_HELPER"

// TestEditHelperProcess is the body of one process of
// TestVersionIndexAcrossProcesses; it does nothing in a normal run.
func TestEditHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("runs as a helper process only")
	}
	dir, who, _ := strings.Cut(spec, "|")
	wd, err := tools.OpenWorkdir(dir)
	require.NoError(t, err)
	defer wd.Close()
	editMany(t, wd, who, helperEdits)
}

const helperEdits = 30

// editMany overwrites shared.txt n times through file tools of their own
// (their own lock, their own file descriptors).
func editMany(t *testing.T, wd *tools.Workdir, who string, n int) {
	defs, err := Definitions(Config{Workdir: wd, MaxVersions: 10000})
	require.NoError(t, err)
	var edit tools.Definition
	for _, d := range defs {
		if d.Name == "edit_file" {
			edit = d
		}
	}
	for i := range n {
		raw, _ := json.Marshal(m{"path": "shared.txt", "new_text": fmt.Sprintf("%s %d\n", who, i)})
		_, err := edit.Handler(t.Context(), tools.Request{CallID: "c", Args: raw})
		require.NoError(t, err)
	}
}

// requireIntactIndex checks that the version index of shared.txt records
// every one of the edits once, with its content kept.
func requireIntactIndex(t *testing.T, dir string, edits int) {
	t.Helper()
	wd, err := tools.OpenWorkdir(dir)
	require.NoError(t, err)
	defer wd.Close()
	s := newStore(wd.Root(), 10000, 1<<20, nil)
	idx, err := s.load("shared.txt")
	require.NoError(t, err)
	require.Equal(t, edits, len(idx.Versions), "versions lost or doubled")
	require.Equal(t, edits+1, idx.Next)
	for i, v := range idx.Versions {
		require.Equal(t, i+1, v.N)
		if i == 0 {
			require.True(t, v.Absent, "the first version records that the file did not exist")
			continue
		}
		data, err := os.ReadFile(filepath.Join(wd.Dir(), s.contentPath("shared.txt", v.N)))
		require.NoError(t, err, "content of version %d is missing", v.N)
		require.Equal(t, v.SHA256, hashBytes(data), "content of version %d does not match its record", v.N)
	}
}

// TestVersionIndexAcrossProcesses runs edits of one file from several
// processes on one workdir: the version index must record every one.
func TestVersionIndexAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs = 4
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEditHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|proc%d", helperEnv, dir, p))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	requireIntactIndex(t, dir, procs*helperEdits)
}

// TestVersionIndexAcrossStores does the same from goroutines, each with
// file tools of its own, as separate workers in one process would have.
func TestVersionIndexAcrossStores(t *testing.T) {
	dir := t.TempDir()
	const stores = 4
	var wg sync.WaitGroup
	for p := range stores {
		wg.Go(func() {
			wd, err := tools.OpenWorkdir(dir)
			require.NoError(t, err)
			defer wd.Close()
			editMany(t, wd, fmt.Sprintf("store%d", p), helperEdits)
		})
	}
	wg.Wait()
	requireIntactIndex(t, dir, stores*helperEdits)
}
