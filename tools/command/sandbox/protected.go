package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ProtectedArgs are the bubblewrap options that bind read-only, over
// themselves, the paths under root of the protected set (T12) that exist
// now: every .git (folder or file) and .toolround, the config and hooks of
// any other git directory (a folder holding HEAD, objects and config, such
// as a bare repository), .gitattributes and .gitmodules in any folder, and
// key files (.env*, *.pem, id_*). A command a rule approved runs with them,
// whatever its scope.
//
// Links are not followed and are not bound: bubblewrap would bind what they
// point to. A path the command creates is not in the set: it was not there
// when the command started. A folder the worker cannot read is skipped.
func ProtectedArgs(root string) []string {
	var a []string
	bind := func(p string) { a = append(a, "--ro-bind", p, p) }
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				gitDirArgs(p, bind)
				return nil
			}
			if name == ".git" || name == reservedDir {
				bind(p)
				return filepath.SkipDir
			}
			gitDirArgs(p, bind)
		}
		if p != root && protectedName(name) {
			bind(p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return a
}

// protectedName reports whether a file of this name is in the protected
// set wherever it is: git's per-folder files and key files.
func protectedName(name string) bool {
	return name == ".git" || name == ".gitattributes" || name == ".gitmodules" ||
		strings.HasPrefix(name, ".env") || strings.HasSuffix(name, ".pem") || strings.HasPrefix(name, "id_")
}

// gitDirArgs binds the config and hooks of dir when dir is a git
// directory not named .git (a bare repository, a gitdir elsewhere).
func gitDirArgs(dir string, bind func(string)) {
	if !isFile(filepath.Join(dir, "HEAD")) || !isDir(filepath.Join(dir, "objects")) {
		return
	}
	for _, n := range []string{"config", "hooks"} {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			bind(p)
		}
	}
}

func isFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
