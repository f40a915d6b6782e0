package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
)

// maxLinkHops bounds the symbolic links followed in one path, as the kernel does.
const maxLinkHops = 40

// target is a path from a tool call: as given (cleaned) and as it really is
// once symbolic links inside the workdir are followed.
type target struct {
	given string
	real  string
}

// touched lists the paths a change of t affects, for Result.Touched.
func (t target) touched() []string {
	if t.given == t.real {
		return []string{t.given}
	}
	return []string{t.given, t.real}
}

// resolve checks a path from a tool call and follows its symbolic links one
// component at a time, so that tools work on the real file: a write replaces
// a link's target rather than the link, and a link may lead neither outside
// the workdir nor into its reserved folder. The os.Root still confines every
// access, and changes go through folders opened without following links
// (openFolder), so a link swapped in after this check redirects none.
func (t *fileTools) resolve(p string) (target, error) {
	rel, err := t.wd.Rel(p)
	if err != nil {
		return target{}, err
	}
	rel = filepath.ToSlash(rel)
	root := t.wd.Root()
	done := "."
	rest := splitPath(rel)
	for hops := 0; len(rest) > 0; {
		next := path.Join(done, rest[0])
		fi, err := root.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			done = path.Join(append([]string{next}, rest[1:]...)...)
			break
		}
		if err != nil {
			return target{}, fmt.Errorf("%s: %w", p, plainErr(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, rest = next, rest[1:]
			continue
		}
		if hops++; hops > maxLinkHops {
			return target{}, fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		link, err := root.Readlink(next)
		if err != nil {
			return target{}, fmt.Errorf("%s: %w", p, plainErr(err))
		}
		var to string
		if filepath.IsAbs(link) {
			r, err := t.wd.Rel(link)
			if err != nil {
				return target{}, fmt.Errorf("%s: %s is a symbolic link to %s, which is outside the workdir", p, next, link)
			}
			to = filepath.ToSlash(r)
		} else {
			to = path.Join(done, filepath.ToSlash(link))
		}
		if to == ".." || strings.HasPrefix(to, "../") {
			return target{}, fmt.Errorf("%s: %s is a symbolic link to %s, which is outside the workdir", p, next, link)
		}
		if to == tools.ReservedDir || strings.HasPrefix(to, tools.ReservedDir+"/") {
			return target{}, fmt.Errorf("%s: %s is a symbolic link into the reserved folder %s", p, next, tools.ReservedDir)
		}
		done, rest = ".", append(splitPath(to), rest[1:]...)
	}
	return target{given: rel, real: done}, nil
}

// ruleReach refuses, for a call a remembered rule approved (T12), a
// target in the protected set (approval.ProtectedPath) when named, the path
// as the call's arguments give it, is not: a symbolic link leads there, or
// a download's file name from its URL. The rule matched the name, and no
// file-tool rule matches a path of the set, so the change waits for a
// person, asked by the real name.
func ruleReach(req tools.Request, named string, tg target) error {
	if !req.RuleApproved || approval.ProtectedPath(named) || !approval.ProtectedPath(tg.real) {
		return nil
	}
	return fmt.Errorf("%s leads to %s, which is in the protected set (.git, key files, ...): no rule approves a change to it; give %s as the path so that a person confirms it", named, tg.real, tg.real)
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// plainErr drops the operation and path from an *fs.PathError, whose path
// is relative to the root and would repeat what the caller already says.
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file or folder")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	case strings.Contains(err.Error(), "escapes from parent"):
		return errors.New("the path leads outside the workdir through a symbolic link")
	}
	return err
}

// tempName is a fresh name for a file that is renamed into place.
func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return ".toolround-tmp-" + hex.EncodeToString(b[:])
}

// openRead opens a file for reading without blocking on a FIFO or a
// device that waits for a peer; callers check that it is a regular file.
func openRead(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
