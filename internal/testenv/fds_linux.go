package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// LeakDescriptors opens descriptors in the test process without
// close-on-exec, as a careless library or the worker's own parent would
// leave them: a file (again at 17 or above), a Unix socket and a pipe. They
// close when the test ends. It returns the file's path, which a child that
// inherited one of them would show in /proc/self/fd.
func LeakDescriptors(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stray-descriptor")
	if err := os.WriteFile(path, []byte("inherited"), 0o600); err != nil {
		t.Fatal(err)
	}
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	})
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fds = append(fds, fd)
	// F_DUPFD, unlike dup2, never takes a descriptor the runtime uses.
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD, 17)
	if err != nil {
		t.Fatal(err)
	}
	fds = append(fds, high)
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	fds = append(fds, sock)
	var p [2]int
	if err := unix.Pipe2(p[:], 0); err != nil {
		t.Fatal(err)
	}
	fds = append(fds, p[0], p[1])
	return path
}

// listingDir is the folder `ls -l /proc/self/fd` opens to list itself.
var listingDir = regexp.MustCompile(`^/proc/\d+/fd$`)

// StrayDescriptors reads the output of `ls -l /proc/self/fd` and returns the
// lines of descriptors above 2, except the one ls opened for the listing.
func StrayDescriptors(ls string) []string {
	var stray []string
	for _, line := range strings.Split(ls, "\n") {
		name, target, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		f := strings.Fields(name)
		if len(f) == 0 {
			continue
		}
		switch fd := f[len(f)-1]; {
		case fd == "0" || fd == "1" || fd == "2":
		case listingDir.MatchString(strings.TrimSpace(target)):
		default:
			stray = append(stray, fd+" -> "+strings.TrimSpace(target))
		}
	}
	return stray
}
