package approval

import (
	"path"
	"strings"
)

// The protected set (T12): what a remembered rule never lets a call
// change. A command a rule approved sees it read-only in the sandbox
// (tools/command/sandbox, which names it with ProtectedName), anything a
// command creates in it is removed when the command ends,
// and with TablesV3 no file-tool rule matches a path in it (ProtectedPath):
// such a call asks (C4).
//
//   - every .git, file or folder, and everything inside one;
//   - the config and hooks of any git directory;
//   - .gitattributes and .gitmodules in any folder;
//   - .toolround and everything inside it;
//   - key files: .env*, *.pem, id_*.

// ProtectedName reports whether a file or folder of this name is in the
// protected set wherever it is, in any letter case: .git, .toolround,
// .gitattributes, .gitmodules and the key files (.env*, *.pem, id_*).
// A folder of such a name is protected with everything inside it.
func ProtectedName(name string) bool {
	n := strings.ToLower(name)
	return n == ".git" || n == ".toolround" || n == ".gitattributes" || n == ".gitmodules" ||
		strings.HasPrefix(n, ".env") || strings.HasSuffix(n, ".pem") || strings.HasPrefix(n, "id_")
}

// ProtectedPath reports whether the workdir-relative path p names
// something in the protected set, read lexically after cleaning (`./`,
// `a/../`, doubled slashes) and in any letter case: an element of it that
// ProtectedName names, or a file of a git directory (gitDirFile: config,
// hooks and the files that make a folder a repository; any folder may be a
// bare repository, so its name does not matter).
func ProtectedPath(p string) bool {
	c := path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	for _, seg := range strings.Split(strings.TrimPrefix(c, "/"), "/") {
		if ProtectedName(seg) {
			return true
		}
	}
	return c != "/" && gitDirFile(c, true)
}
