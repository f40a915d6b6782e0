// Package placement binds a session's workspace to one host under
// WORKSPACE_PLACEMENT=host (SPEC W4, W5). The binding is held by one
// workflow per session, workspace/<session_id> (names.WorkspaceWorkflowID):
// the update bind makes the first writer's host the session's, move
// rebinds it to a live host and bumps its generation, release lets it go.
// Each worker polls a task queue of its own host, <TASK_QUEUE>@<HOST_ID>
// (HostQueue), where a placed round sends every workspace call.
package placement

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/text"
)

// Names registered with Temporal; stable strings, as round's are.
const (
	// WorkflowName is the type of the workflow that holds a binding.
	WorkflowName = "WorkspaceBinding"
	// UpdateBind binds an unbound session to the host it names and
	// answers the binding: the first writer wins.
	UpdateBind = "bind"
	// UpdateMove rebinds a session to a host with a live poller.
	UpdateMove = "move"
	// UpdateRelease lets a session's binding go (its workspace was
	// removed).
	UpdateRelease = "release"
	// QueryBinding answers the binding.
	QueryBinding = "binding"
	// ActivityBindWorkspace is the round's one question about its binding.
	ActivityBindWorkspace = "BindWorkspace"
	// ActivityHostAlive asks whether a host's queue has a poller seen
	// within the host timeout.
	ActivityHostAlive = "HostAlive"
)

// Settings of WORKSPACE_PLACEMENT, HOST_ID and WORKSPACE_HOST_TIMEOUT.
const (
	EnvPlacement   = "WORKSPACE_PLACEMENT"
	EnvHostID      = "HOST_ID"
	EnvHostTimeout = "WORKSPACE_HOST_TIMEOUT"
	// Shared keeps every workspace in one folder that every worker sees
	// (the default); Host binds each session's workspace to one host.
	Shared = "shared"
	Host   = "host"
	// DefaultHostTimeout is WORKSPACE_HOST_TIMEOUT's default.
	DefaultHostTimeout = 60 * time.Second
	// HostIDFile is where a worker keeps its HOST_ID, under TOOLS_WORKDIR,
	// so that it follows the disk.
	HostIDFile = ".toolround/host-id"
	// MaxHostIDLen bounds a host id, so a host queue's name stays short.
	MaxHostIDLen = 64
)

// Binding is a session's host and the generation of that binding: 1 for
// the first bind, one more for every move or release since. A zero Host
// is no binding.
type Binding struct {
	Host       string `json:"host,omitempty"`
	Generation int    `json:"generation"`
}

// BindInput is the round's question: bind Session to Host unless it is
// bound already.
type BindInput struct {
	Session   string `json:"session"`
	Host      string `json:"host"`
	TaskQueue string `json:"task_queue"`
}

// MoveInput is the update move's argument (and bind's).
type MoveInput struct {
	Host string `json:"host"`
}

// ReleaseInput is the update release's argument: with Host set, only a
// binding to that host is released (the TTL janitor of that host).
type ReleaseInput struct {
	Host string `json:"host,omitempty"`
}

// HostAliveInput asks about Host's queue of TaskQueue.
type HostAliveInput struct {
	TaskQueue string        `json:"task_queue"`
	Host      string        `json:"host"`
	Timeout   time.Duration `json:"timeout"`
}

// HostAliveOutput is its answer: Alive when a poller of the host's queue
// was seen within the timeout; LastSeen the newest poller's last access.
type HostAliveOutput struct {
	Alive    bool      `json:"alive"`
	LastSeen time.Time `json:"last_seen,omitempty"`
}

// HostQueue is the task queue of host's workspace activities:
// <TASK_QUEUE>@<HOST_ID>.
func HostQueue(taskQueue, host string) string { return taskQueue + "@" + host }

// CheckHostID says what keeps id from being a HOST_ID: 1 to 64 letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func CheckHostID(id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", EnvHostID)
	}
	if len(id) > MaxHostIDLen {
		return fmt.Errorf("%s=%q is %d bytes, more than %d", EnvHostID, id, len(id), MaxHostIDLen)
	}
	if !text.PlainName(id) {
		return fmt.Errorf("%s=%q: use letters, digits, '.', '_' or '-', starting with a letter or digit", EnvHostID, id)
	}
	return nil
}

// ParsePlacement reads WORKSPACE_PLACEMENT's value; "" is Shared.
func ParsePlacement(v string) (string, error) {
	switch v = strings.TrimSpace(v); v {
	case "", Shared:
		return Shared, nil
	case Host:
		return Host, nil
	}
	return "", fmt.Errorf("%s=%q: want shared or host", EnvPlacement, v)
}
