package console

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolround/toolround/round/names"
)

// The workflows the console acts on are rounds and agent runs, told by
// their id shapes (names.WorkflowID, names.AgentWorkflowID) and, in the
// Temporal backend, by their types too (H10). Any other id, whatever
// workflow of the namespace it names, is no such round or run: 404, and
// nothing is sent to Temporal for it.
type idKind int

const (
	kindRound idKind = 1 << iota // toolround/<session>/<run>/<round>
	kindAgent                    // agentrun/<session>/<run>
	// kindWorkspace is the workflow holding a session's workspace binding
	// (W4): workspace/<session>. It is read with its session, so that a
	// scoped token's checks apply; no round or agent run endpoint takes it.
	kindWorkspace
)

func (k idKind) String() string {
	switch k {
	case kindRound:
		return "round"
	case kindAgent:
		return "agent run"
	case kindWorkspace:
		return "workspace binding"
	}
	return "round or agent run"
}

func (k idKind) shape() string {
	var s []string
	if k&kindRound != 0 {
		s = append(s, names.WorkflowIDPrefix+"/<session>/<run>/<round>")
	}
	if k&kindAgent != 0 {
		s = append(s, names.AgentWorkflowIDPrefix+"/<session>/<run>")
	}
	if k&kindWorkspace != 0 {
		s = append(s, names.WorkspaceWorkflowIDPrefix+"/<session>")
	}
	return strings.Join(s, " or ")
}

// parseWorkflowID reads a round's, an agent run's or a workspace binding's id: its kind and its
// session. ok is false for any other id, including one that would only
// read as a round's after cleaning (dot segments, doubled or encoded
// slashes, a round number with a sign or leading zeros).
func parseWorkflowID(id string) (kind idKind, session string, ok bool) {
	parts := strings.Split(id, "/")
	switch {
	case len(parts) == 4 && parts[0] == names.WorkflowIDPrefix:
		n, err := strconv.Atoi(parts[3])
		if err != nil || n < 0 || strconv.Itoa(n) != parts[3] {
			return 0, "", false
		}
		kind = kindRound
	case len(parts) == 3 && parts[0] == names.AgentWorkflowIDPrefix:
		kind = kindAgent
	case len(parts) == 2 && parts[0] == names.WorkspaceWorkflowIDPrefix:
		if !names.ValidIdentifier(parts[1]) {
			return 0, "", false
		}
		return kindWorkspace, parts[1], true
	default:
		return 0, "", false
	}
	if !names.ValidIdentifier(parts[1]) || !names.ValidIdentifier(parts[2]) {
		return 0, "", false
	}
	return kind, parts[1], true
}

// checkID refuses an id that is not of one of kinds (404 not_found).
func checkID(id string, kinds idKind) (idKind, string, error) {
	kind, session, ok := parseWorkflowID(id)
	if !ok || kind&kinds == 0 {
		return 0, "", fmt.Errorf("%q is not a %s id (%s): %w", id, kinds, kinds.shape(), ErrNotFound)
	}
	return kind, session, nil
}

// target checks that p may act on the workflow id of one of kinds. A
// workflow of a session outside p's scope reads as no such workflow, as
// the backend says of one that does not exist: 404, which does not tell
// that it exists.
func target(p principal, id string, kinds idKind) error {
	kind, session, err := checkID(id, kinds)
	if err != nil {
		return err
	}
	if !p.allows(session) {
		return fmt.Errorf("%s %s: %w", kind, id, ErrNotFound)
	}
	return nil
}
