package tools

// Kind is how a round runs a tool's calls in pass 2 (P2). Each kind is one
// file of the round's workflow and one line of its table of kinds
// (internal/workflows/kinds.go), which is the list of kinds a worker runs;
// a tool whose kind no line of the table runs is a tool the worker lacks
// (docs/adding-a-tool.md).
type Kind string

// The kinds of the round's table.
const (
	// KindWait: a wait for a person's answer (Interactive, ask_user) or
	// for the client's result (a client tool, which has no definition).
	KindWait Kind = "wait"
	// KindChildRun: a child agent run (subagents).
	KindChildRun Kind = "child_run"
	// KindChatbot: a message to a chatbot's persistent run
	// (send_to_chatbot).
	KindChatbot Kind = "chatbot"
	// KindToolWorker: an activity on a tool worker's queue (Remote, the
	// user's own tools).
	KindToolWorker Kind = "tool_worker"
	// KindActivity: an activity on the worker, through Handler (every
	// other tool: the built-ins, MCP servers' tools, script_* and ext_*).
	KindActivity Kind = "activity"
)

// RunsAgent: the kind's calls run an agent (a child run, a chatbot), which
// may have changed anything the caller read (P3.3) and which an MCP
// client sees as an agent (Z).
func (k Kind) RunsAgent() bool {
	return k == KindChildRun || k == KindChatbot
}

// EffectiveKind is how a round runs the tool's calls: Definition.Kind when
// set, else a wait for an Interactive tool, the tool worker's queue for a
// Remote one, and the worker's activity for the rest.
func (d *Definition) EffectiveKind() Kind {
	switch {
	case d.Kind != "":
		return d.Kind
	case d.Interactive:
		return KindWait
	case d.Remote != nil:
		return KindToolWorker
	}
	return KindActivity
}

// kindConflict says why the definition's facts name two kinds, or "".
func (d *Definition) kindConflict() string {
	switch {
	case d.Interactive && d.Remote != nil:
		return "Interactive and Remote"
	case d.Kind != "" && d.Interactive && d.Kind != KindWait:
		return "Kind " + string(d.Kind) + " and Interactive"
	case d.Kind != "" && d.Remote != nil && d.Kind != KindToolWorker:
		return "Kind " + string(d.Kind) + " and Remote"
	}
	return ""
}
