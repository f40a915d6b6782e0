package tools

// Kind is how a round runs a tool's calls in pass 2 (P2): each kind is one
// file of the round's workflow and one line of its table of kinds
// (internal/workflows/kinds.go; docs/adding-a-tool.md). A definition's
// facts decide its kind (Definition.Kind); a tool sets at most one of them.
type Kind string

// The kinds, in the order the round's table lists them.
const (
	// KindWait: a wait for a person's answer (Interactive, ask_user) or
	// for the client's result (a client tool, which has no definition).
	KindWait Kind = "wait"
	// KindChildRun: a child agent run (ChildRun, subagents).
	KindChildRun Kind = "child_run"
	// KindChatbot: a message to a chatbot's persistent run (Chatbot).
	KindChatbot Kind = "chatbot"
	// KindToolWorker: an activity on a tool worker's queue (Remote, the
	// user's own tools).
	KindToolWorker Kind = "tool_worker"
	// KindActivity: an activity on the worker, through Handler (every
	// other tool: the built-ins, MCP servers' tools, script_* and ext_*).
	KindActivity Kind = "activity"
)

// Kinds are every kind, in the order of the round's table.
func Kinds() []Kind {
	return []Kind{KindWait, KindChildRun, KindChatbot, KindToolWorker, KindActivity}
}

// Kind is how a round runs the tool's calls. KindActivity needs a
// Handler; the others are run by the round itself.
func (d *Definition) Kind() Kind {
	switch {
	case d.Interactive:
		return KindWait
	case d.ChildRun:
		return KindChildRun
	case d.Chatbot:
		return KindChatbot
	case d.Remote != nil:
		return KindToolWorker
	}
	return KindActivity
}

// kindFacts is how many of the facts that choose a kind the definition
// sets; more than one is a mistake, which Registry.Register refuses.
func (d *Definition) kindFacts() int {
	n := 0
	for _, set := range []bool{d.Interactive, d.ChildRun, d.Chatbot, d.Remote != nil} {
		if set {
			n++
		}
	}
	return n
}
