// Package sandbox confines the processes of run_command, background_command
// and the script_* tools with bubblewrap and resource limits (docs/sandbox.md).
package sandbox

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// Modes, the values of SANDBOX.
const (
	// ModeAuto uses bubblewrap when it works here, else runs without a sandbox
	// and says so loudly in the worker log.
	ModeAuto = "auto"
	// ModeBwrap requires bubblewrap: the worker refuses to start without it.
	ModeBwrap = "bwrap"
	// ModeNone runs commands unconfined, as the worker's user.
	ModeNone = "none"
)

// Networks, the values of COMMAND_NETWORK.
const (
	// NetworkNone gives commands a network namespace of their own with only
	// its own loopback: they reach nothing, not the worker's Redis or Temporal.
	NetworkNone = "none"
	// NetworkHost gives commands the worker's network, its loopback services
	// included.
	NetworkHost = "host"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvMode     = "SANDBOX"
	EnvNetwork  = "COMMAND_NETWORK"
	EnvCPU      = "COMMAND_CPU_SECONDS"
	EnvMemory   = "COMMAND_MEMORY_MB"
	EnvProcs    = "COMMAND_MAX_PROCS"
	EnvFileSize = "COMMAND_FILE_SIZE_MB"
	EnvReadOnly = "SANDBOX_READ_ONLY"
	EnvUser     = "SANDBOX_USER"
	// EnvNoPidsCgroup=1 makes the sandbox act as if no pids cgroup could be
	// made here, so tests can check what bounds the process count then.
	EnvNoPidsCgroup = "TOOLROUND_TEST_NO_PIDS_CGROUP"
)

// Defaults of the limits.
const (
	DefaultCPUSeconds = 3600
	DefaultMemory     = 2 << 30
	DefaultProcs      = 1024
	DefaultFileSize   = 4 << 30
	// DefaultUserID is the uid and gid a root worker runs commands as when
	// no pids cgroup bounds them: one of the ids Debian reserves and gives
	// no account (65000-65533), and outside systemd's dynamic range.
	DefaultUserID = 65533
)

// Config is the sandbox configuration. Zero fields take the defaults
// written beside them; a negative limit means no limit.
type Config struct {
	// Mode is SANDBOX: ModeAuto (default), ModeBwrap or ModeNone.
	Mode string
	// Network is COMMAND_NETWORK: NetworkNone (default) or NetworkHost.
	Network string
	// CPUSeconds is COMMAND_CPU_SECONDS, the CPU time each process may use
	// (RLIMIT_CPU): past it the process gets SIGXCPU. Default 3600.
	CPUSeconds int64
	// MemoryBytes is COMMAND_MEMORY_MB: the memory of a command's whole
	// process tree where a memory cgroup can be made, else the address space
	// of each process (RLIMIT_AS). Default 2 GiB.
	MemoryBytes int64
	// MaxProcs is COMMAND_MAX_PROCS, the processes and threads a command's
	// tree may have at once: a pids cgroup where one can be made, else
	// RLIMIT_NPROC when the worker is not root. Default 1024.
	MaxProcs int64
	// FileSizeBytes is COMMAND_FILE_SIZE_MB, the largest file a process may
	// write (RLIMIT_FSIZE): past it the write fails and the process gets
	// SIGXFSZ. Default 4 GiB.
	FileSizeBytes int64
	// ReadOnly is SANDBOX_READ_ONLY, more folders (':'-separated) that
	// commands see read-only besides the system folders /usr, /bin, /sbin,
	// /lib* and /etc: a toolchain under /opt, say. Default none.
	ReadOnly []string
	// Hide lists files and folders commands must not see even where they lie
	// in a folder they do see: the worker's key files. Files and folders of
	// /etc that other users cannot read are hidden as well.
	Hide []string
	// User is SANDBOX_USER, whom a root worker runs commands as when no
	// pids cgroup can bound their process count, so that RLIMIT_NPROC does:
	// a user name or uid[:gid]. Default uid and gid 65533 (DefaultUserID),
	// which must then belong to no account here. The user gets read and
	// write access to the workdir through POSIX ACLs (docs/sandbox.md).
	User string
	// NoPidsCgroup (TOOLROUND_TEST_NO_PIDS_CGROUP=1) does without the pids
	// cgroup even where one could be made: for tests of the other bounds.
	NoPidsCgroup bool
	// Bwrap is the bubblewrap binary. Default "bwrap" from PATH.
	Bwrap string
}

// ConfigFromEnv reads the configuration from the environment through getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := Config{Mode: strings.ToLower(get(EnvMode)), Network: strings.ToLower(get(EnvNetwork)),
		User: get(EnvUser), NoPidsCgroup: get(EnvNoPidsCgroup) == "1"}
	var err error
	if c.CPUSeconds, err = envLimit(get, EnvCPU, 1); err != nil {
		return c, err
	}
	if c.MemoryBytes, err = envLimit(get, EnvMemory, 1<<20); err != nil {
		return c, err
	}
	if c.MaxProcs, err = envLimit(get, EnvProcs, 1); err != nil {
		return c, err
	}
	if c.FileSizeBytes, err = envLimit(get, EnvFileSize, 1<<20); err != nil {
		return c, err
	}
	if v := get(EnvReadOnly); v != "" {
		for _, p := range strings.Split(v, ":") {
			if p == "" {
				continue
			}
			if !filepath.IsAbs(p) {
				return c, fmt.Errorf("%s: %q is not an absolute path", EnvReadOnly, p)
			}
			c.ReadOnly = append(c.ReadOnly, filepath.Clean(p))
		}
	}
	if c.User != "" {
		if _, _, err := resolveUser(c.User); err != nil {
			return c, err
		}
	}
	_, err = c.withDefaults()
	return c, err
}

// envLimit reads a positive whole number times unit; "unlimited" is -1 and
// an empty value 0 (the default).
func envLimit(get func(string) string, name string, unit int64) (int64, error) {
	v := get(name)
	switch strings.ToLower(v) {
	case "":
		return 0, nil
	case "unlimited", "none":
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return 0, fmt.Errorf("%s=%q: want a whole number above 0, or unlimited", name, v)
	}
	return n * unit, nil
}

func (c Config) withDefaults() (Config, error) {
	switch c.Mode {
	case "":
		c.Mode = ModeAuto
	case ModeAuto, ModeBwrap, ModeNone:
	default:
		return c, fmt.Errorf("%s=%q: want auto, bwrap or none", EnvMode, c.Mode)
	}
	switch c.Network {
	case "":
		c.Network = NetworkNone
	case NetworkNone, NetworkHost:
	default:
		return c, fmt.Errorf("%s=%q: want none or host", EnvNetwork, c.Network)
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.CPUSeconds, DefaultCPUSeconds)
	def(&c.MemoryBytes, DefaultMemory)
	def(&c.MaxProcs, DefaultProcs)
	def(&c.FileSizeBytes, DefaultFileSize)
	if c.Bwrap == "" {
		c.Bwrap = "bwrap"
	}
	return c, nil
}

// resolveUser reads SANDBOX_USER: a user name or uid, then :gid if the
// group is not the user's (a uid's group is the same number). Empty is DefaultUserID, which must belong to no account here:
// a uid of its own is counted, signalled and trusted by nothing else.
func resolveUser(spec string) (uid, gid uint32, err error) {
	if spec == "" {
		if u, err := user.LookupId(strconv.Itoa(DefaultUserID)); err == nil {
			return 0, 0, fmt.Errorf("uid %d, the default %s, belongs to the account %q here: set %s to a uid no one else uses", DefaultUserID, EnvUser, u.Username, EnvUser)
		}
		return DefaultUserID, DefaultUserID, nil
	}
	u, g, hasGid := strings.Cut(spec, ":")
	n, nerr := strconv.ParseUint(u, 10, 32)
	switch {
	case nerr == nil:
		uid, gid = uint32(n), uint32(n)
	default:
		acct, err := user.Lookup(u)
		if err != nil {
			return 0, 0, fmt.Errorf("%s=%q: %w", EnvUser, spec, err)
		}
		un, _ := strconv.ParseUint(acct.Uid, 10, 32)
		gn, _ := strconv.ParseUint(acct.Gid, 10, 32)
		uid, gid = uint32(un), uint32(gn)
	}
	if hasGid {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("%s=%q: want a user name or uid[:gid]", EnvUser, spec)
		}
		gid = uint32(n)
	}
	if uid == 0 || gid == 0 {
		return 0, 0, fmt.Errorf("%s=%q: commands must not run as root or in its group", EnvUser, spec)
	}
	return uid, gid, nil
}
