// Package sandbox confines the processes of run_command, background_command
// and the script_* tools with bubblewrap and resource limits (docs/sandbox.md).
package sandbox

import (
	"fmt"
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
)

// Defaults of the limits.
const (
	DefaultCPUSeconds = 3600
	DefaultMemory     = 2 << 30
	DefaultProcs      = 1024
	DefaultFileSize   = 4 << 30
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
	// Bwrap is the bubblewrap binary. Default "bwrap" from PATH.
	Bwrap string
}

// ConfigFromEnv reads the configuration from the environment through getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := Config{Mode: strings.ToLower(get(EnvMode)), Network: strings.ToLower(get(EnvNetwork))}
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
