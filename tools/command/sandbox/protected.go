package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/toolround/toolround/approval"
)

// protectedScan is the protected set (T12) found under root: the paths to
// bind read-only over themselves, and the symbolic links among them or
// inside them. approval.ProtectedName names the set; a folder holding HEAD
// and objects is a git directory whatever its name, and its config and
// hooks are in the set.
type protectedScan struct {
	root  string
	paths []string
	links []string
	ids   map[fileID]bool
}

type fileID struct{ dev, ino uint64 }

func idOf(p string) (fileID, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	// The fields' types differ by architecture.
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// scanProtected walks root for the protected set as it is now: every .git
// (folder or file) and .toolround, the config and hooks of any other git
// directory (a folder holding HEAD, objects and config, such as a bare
// repository), .gitattributes and .gitmodules in any folder, and key files
// (.env*, *.pem, id_*), in any letter case. Links are not followed: a
// protected path that is one, or a link inside a protected folder, is in
// links. A folder the worker cannot read is skipped.
func scanProtected(root string) *protectedScan {
	ps := &protectedScan{root: root, ids: map[fileID]bool{}}
	folders := map[string]bool{} // protected folders found before the walk reaches them
	under := ""                  // the protected folder being walked: only its links matter
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if under != "" && !strings.HasPrefix(p, under+"/") {
			under = ""
		}
		link := d.Type()&fs.ModeSymlink != 0
		if under != "" {
			if link {
				ps.links = append(ps.links, p)
			}
			return nil
		}
		if folders[p] {
			under = p
			return nil
		}
		if p != root && approval.ProtectedName(d.Name()) {
			if link {
				ps.links = append(ps.links, p)
				return nil
			}
			ps.add(p)
			if d.IsDir() {
				under = p
			}
			return nil
		}
		if d.IsDir() && !link && isFile(filepath.Join(p, "HEAD")) && isDir(filepath.Join(p, "objects")) {
			for _, n := range []string{"config", "hooks"} {
				c := filepath.Join(p, n)
				fi, err := os.Lstat(c)
				switch {
				case err != nil:
				case fi.Mode()&fs.ModeSymlink != 0:
					ps.links = append(ps.links, c)
				default:
					ps.add(c)
					if fi.IsDir() {
						folders[c] = true
					}
				}
			}
		}
		return nil
	})
	return ps
}

func (ps *protectedScan) add(p string) {
	ps.paths = append(ps.paths, p)
	if id, ok := idOf(p); ok {
		ps.ids[id] = true
	}
}

// args are the bubblewrap options that bind the set read-only over
// itself, or an error naming a link in it: bubblewrap would bind the link's
// target, and the command could still replace the link, so a command a
// rule approved does not run there.
func (ps *protectedScan) args() ([]string, error) {
	if len(ps.links) > 0 {
		rel, _ := filepath.Rel(ps.root, ps.links[0])
		return nil, fmt.Errorf("sandbox: %s is a symbolic link in the protected set, which a command a rule approved cannot be kept from changing (T12): approve the command itself", rel)
	}
	var a []string
	for _, p := range ps.paths {
		a = append(a, "--ro-bind", p, p)
	}
	return a, nil
}

// sweep removes what the command, now ended, left of the protected set
// that was not there when it started (the paths and links a new scan finds
// that are not the files the first one found, which a moved folder may
// carry along), and says what it removed, as sentences for the result.
func (ps *protectedScan) sweep() []string {
	now := scanProtected(ps.root)
	var made []string
	for _, p := range append(now.paths, now.links...) {
		if id, ok := idOf(p); ok && ps.ids[id] {
			continue
		}
		made = append(made, p)
	}
	sort.Strings(made)
	var out []string
	for i, p := range made {
		if i > 0 && strings.HasPrefix(p, made[i-1]+"/") {
			made[i] = made[i-1] // removed with its folder
			continue
		}
		rel, _ := filepath.Rel(ps.root, p)
		if err := os.RemoveAll(p); err != nil {
			out = append(out, fmt.Sprintf("could not remove %s, which the command created in the protected set (T12): %v", rel, err))
			continue
		}
		out = append(out, fmt.Sprintf("removed %s: a command a rule approved may not create a path of the protected set (T12)", rel))
	}
	return out
}

func isFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
