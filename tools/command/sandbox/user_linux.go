package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// commandUser is the unprivileged user a root worker runs commands as when
// no pids cgroup bounds their process count: RLIMIT_NPROC binds every user
// but root. It gets write access to the workdir through POSIX ACLs, so the
// files keep their owners and modes.
type commandUser struct {
	uid, gid uint32
	workdir  string
	setpriv  string // util-linux's setpriv, which switches to the user
	// hidden are the files commands must not see (Config.Hide): a key file
	// in the workdir is masked in the sandbox, and gets no grant either.
	hidden map[string]bool

	mu sync.Mutex // one grant pass at a time
	// since is when the last grant pass started: entries whose status has
	// not changed since then were granted already.
	since time.Time
}

func (u *commandUser) String() string { return fmt.Sprintf("uid %d, gid %d", u.uid, u.gid) }

// switchArgs run the rest of the arguments as the user, with no
// supplementary groups: setpriv changes the real, effective and saved ids,
// which clears every capability, and keeps the resource limits.
func (u *commandUser) switchArgs() []string {
	return []string{u.setpriv, fmt.Sprintf("--reuid=%d", u.uid), fmt.Sprintf("--regid=%d", u.gid), "--clear-groups", "--"}
}

// grant gives the user read and write access to the workdir's files and
// folders (and search access to folders, execute to programs) that changed
// since the last pass: the file tools write files of the worker's user.
// The reserved folder stays the worker's. It fails only when the workdir
// itself cannot be granted.
//
// Commands change the tree while the pass runs (a background command, say),
// so no path is followed twice: each entry is opened without following a
// symbolic link, relative to its folder's descriptor, and its ACL is read
// and set through that descriptor. A file with more than one link is left
// alone: its other link may lie outside the workdir.
func (u *commandUser) grant() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	start := time.Now()
	fd, err := unix.Open(u.workdir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("give %s write access to the workdir: %w", u, err)
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("give %s write access to the workdir: %w", u, err)
	}
	if st.Uid != u.uid {
		if err := grantACL(fd, true, fs.FileMode(st.Mode&0o777), u.uid); err != nil {
			return fmt.Errorf("give %s write access to the workdir: %w", u, err)
		}
	}
	// ctime has the kernel's coarse clock: a margin keeps an entry changed
	// just before the last pass from being skipped.
	since := u.since.Add(-time.Second)
	if u.since.IsZero() {
		since = time.Time{}
	}
	u.grantIn(fd, u.workdir, since)
	u.since = start
	return nil
}

// grantIn grants the entries of the folder open as dirfd, and those below.
func (u *commandUser) grantIn(dirfd int, dir string, since time.Time) {
	dfd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(dfd), dir)
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, name := range names {
		p := filepath.Join(dir, name)
		if dir == u.workdir && name == reservedDir || u.hidden[p] {
			continue
		}
		// A first look by name only saves opening what needs nothing; what
		// is done is decided again on the descriptor.
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if isDir, grant := u.wants(&st, since); !isDir && !grant {
			continue
		}
		fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if unix.Fstat(fd, &st) == nil {
			isDir, grant := u.wants(&st, since)
			if grant {
				_ = grantACL(fd, isDir, fs.FileMode(st.Mode&0o777), u.uid)
			}
			if isDir {
				u.grantIn(fd, p, since)
			}
		}
		_ = unix.Close(fd)
	}
}

// wants says whether an entry is a folder, and whether it needs a grant:
// a folder or a file of one link, changed since the last pass, that is not
// the user's.
func (u *commandUser) wants(st *unix.Stat_t, since time.Time) (isDir, grant bool) {
	isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
	isFile := st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1
	changed := time.Unix(st.Ctim.Unix()).After(since)
	return isDir, (isDir || isFile) && changed && st.Uid != u.uid
}

// POSIX ACLs as the kernel stores them in the system.posix_acl_* extended
// attributes: a version, then entries of tag, permissions and id, sorted
// by tag and id.
const (
	aclVersion   = 2
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclGroup     = 0x08
	aclMask      = 0x10
	aclOther     = 0x20
	aclUndefined = 0xffffffff

	xattrACLAccess  = "system.posix_acl_access"
	xattrACLDefault = "system.posix_acl_default"
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

func parseACL(b []byte) ([]aclEntry, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 || binary.LittleEndian.Uint32(b) != aclVersion {
		return nil, errors.New("unknown ACL format")
	}
	var acl []aclEntry
	for i := 4; i < len(b); i += 8 {
		acl = append(acl, aclEntry{binary.LittleEndian.Uint16(b[i:]), binary.LittleEndian.Uint16(b[i+2:]), binary.LittleEndian.Uint32(b[i+4:])})
	}
	return acl, nil
}

func encodeACL(acl []aclEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range acl {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// aclFromMode is the ACL that mode alone stands for.
func aclFromMode(mode fs.FileMode) []aclEntry {
	return []aclEntry{
		{aclUserObj, uint16(mode>>6) & 7, aclUndefined},
		{aclGroupObj, uint16(mode>>3) & 7, aclUndefined},
		{aclOther, uint16(mode) & 7, aclUndefined},
	}
}

// withUser gives uid at least perm in acl, raising the mask as needed
// without raising what anyone else may do: every other entry the mask
// limits is cut to what it allowed before. It reports whether acl changed.
func withUser(acl []aclEntry, uid uint32, perm uint16) ([]aclEntry, bool) {
	mask := -1
	user := -1
	for i, e := range acl {
		switch {
		case e.tag == aclMask:
			mask = i
		case e.tag == aclUser && e.id == uid:
			user = i
		}
	}
	oldMask := uint16(7)
	if mask >= 0 {
		oldMask = acl[mask].perm
	}
	if user >= 0 && acl[user].perm&perm == perm && oldMask&perm == perm {
		return acl, false
	}
	out := make([]aclEntry, 0, len(acl)+2)
	for _, e := range acl {
		switch e.tag {
		case aclMask:
			continue
		case aclUser, aclGroupObj, aclGroup:
			if mask >= 0 {
				e.perm &= oldMask
			}
		}
		if e.tag == aclUser && e.id == uid {
			e.perm |= perm
		}
		out = append(out, e)
	}
	if user < 0 {
		out = append(out, aclEntry{aclUser, perm, uid})
	}
	newMask := uint16(0)
	for _, e := range out {
		if e.tag == aclUser || e.tag == aclGroupObj || e.tag == aclGroup {
			newMask |= e.perm
		}
	}
	out = append(out, aclEntry{aclMask, newMask, aclUndefined})
	sortACL(out)
	return out, true
}

func sortACL(acl []aclEntry) {
	for i := 1; i < len(acl); i++ {
		for j := i; j > 0 && (acl[j].tag < acl[j-1].tag || acl[j].tag == acl[j-1].tag && acl[j].id < acl[j-1].id); j-- {
			acl[j], acl[j-1] = acl[j-1], acl[j]
		}
	}
}

// grantACL gives uid read and write on the file or folder open as fd
// (execute where someone may execute it); a folder also gets search, and
// a default entry that its new files and folders inherit.
func grantACL(fd int, dir bool, mode fs.FileMode, uid uint32) error {
	perm := uint16(6)
	if dir || mode&0o111 != 0 {
		perm = 7
	}
	// An O_PATH descriptor takes no xattr calls; its /proc link names the
	// very file it holds.
	p := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := grantACLAttr(p, xattrACLAccess, mode, uid, perm); err != nil {
		return err
	}
	if dir {
		return grantACLAttr(p, xattrACLDefault, mode, uid, 7)
	}
	return nil
}

func grantACLAttr(p, attr string, mode fs.FileMode, uid uint32, perm uint16) error {
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(p, attr, buf)
	var acl []aclEntry
	switch {
	case errors.Is(err, unix.ENODATA):
		acl = aclFromMode(mode)
	case err != nil:
		return fmt.Errorf("read the ACL: %w", err)
	default:
		if acl, err = parseACL(buf[:n]); err != nil {
			return fmt.Errorf("the ACL: %w", err)
		}
	}
	acl, changed := withUser(acl, uid, perm)
	if !changed {
		return nil
	}
	if err := unix.Setxattr(p, attr, encodeACL(acl), 0); err != nil {
		return fmt.Errorf("set the ACL: %w", err)
	}
	return nil
}
