package round

import "sort"

// RunState is what one round hands to the next in a run: the dedupe map
// (P1.3), the tools whose schemas the model has (P1.4, S4) and the allow
// rules remembered from confirmations (P1.6).
type RunState struct {
	Dedupe  map[string]DedupeEntry `json:"dedupe,omitempty"`
	Fetched []string               `json:"fetched,omitempty"`
	Allow   []AllowRule            `json:"allow,omitempty"`
	// Seq numbers dedupe entries in the order they were added, for eviction.
	Seq int64 `json:"seq,omitempty"`
	// Limits are the run's limits as its rounds set them (B1): a round's
	// input sets the fields it names, the others stay. They are a brake the
	// client carries; the worker's WORKER_LIMITS is the boundary.
	Limits *Limits `json:"limits,omitempty"`
	// Usage is what the run did, for its limits and counted rules (B1, B2).
	Usage *Usage `json:"usage,omitempty"`
	// ResultRefs are the blob references of the tool results an agent
	// run's context budget replaced (B3): the only ones read_result serves,
	// and only in rounds the agent run starts.
	ResultRefs []string `json:"result_refs,omitempty"`
	// Children are the workflow ids of the run's background subagents
	// (G2), which cancelling the run cancels.
	Children []string `json:"children,omitempty"`
	// Counted are the background subagents whose counts have joined the
	// run's (B1), once each, when a look first found them ended.
	Counted []string `json:"counted,omitempty"`
}

// AllowRule is an allow rule remembered from a confirmation (P1.6, T4).
// It has the fields of approval.Rule, so either converts to the other;
// rules written before T4 ({tool, pattern}, no MAC) still decode, and are
// ignored by rounds that check MACs. A rule approves, without asking, later
// calls of Tool in the same run: with Pattern, the calls the pattern matches
// (approval.Match); without, the calls whose canonical arguments are Args;
// with Secret, it lets the matched HTTP calls send that secret. MAC binds the
// rule to its session and run (approval.Sign), keyed with the workers' rule
// key.
type AllowRule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern,omitempty"`
	Args    string `json:"args,omitempty"`
	Secret  string `json:"secret,omitempty"`
	// UpTo, when set, is how many matching calls the rule approves in the
	// run (B2); the MAC covers it, Usage.Rules counts them.
	UpTo int64 `json:"up_to,omitempty"`
	// Scope is what a command the rule approves may change (T12,
	// approval.ScopeReadOnly or approval.ScopeWrite); the MAC covers it
	// when set. A rule without one runs with write.
	Scope string `json:"scope,omitempty"`
	// Schema is the schema hash of the user tool the rule was remembered
	// for (Y3); the MAC covers it when set.
	Schema string `json:"schema,omitempty"`
	MAC    string `json:"mac,omitempty"`
}

// DedupeEntry is an earlier successful result of a call in the run.
type DedupeEntry struct {
	Tool       string `json:"tool"`
	Content    string `json:"content"`
	ContentRef string `json:"content_ref,omitempty"`
	Round      int    `json:"round"`
	CallID     string `json:"call_id"`
	Seq        int64  `json:"seq"`
	// Read and Touched are the workdir paths the call read and changed; a
	// later change to them drops the entry (P3.3).
	Read    []string `json:"read,omitempty"`
	Touched []string `json:"touched,omitempty"`
	// Volatile entries describe the whole workdir (listings, commands) and
	// are dropped by any change to it.
	Volatile bool `json:"volatile,omitempty"`
	// Files is the state of each file the call read, by workdir path, when
	// its tool records it (read_files): before the entry is served again,
	// the round checks that none of them changed (U3).
	Files map[string]FileState `json:"files,omitempty"`
	// Generation is the workspace binding's generation the entry was made
	// under, for a workspace call of a placed round (W5): a round bound
	// under another generation never serves it.
	Generation int `json:"generation,omitempty"`
}

// FileState is what a result records of a file it read (U3): its size,
// modification time and a digest of its content; for a folder, the number
// of its entries, its modification time and a digest of its listing.
type FileState struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
	// SHA256 is the hex digest of the content; empty for a file too large
	// to hash, which is then compared by size and time only.
	SHA256 string `json:"sha256,omitempty"`
	// Missing: the path did not exist when it was read.
	Missing bool `json:"missing,omitempty"`
}

// Clone returns a deep copy, never nil.
func (s *RunState) Clone() *RunState {
	out := &RunState{Dedupe: map[string]DedupeEntry{}}
	if s == nil {
		return out
	}
	out.Seq = s.Seq
	// Copying a map does not depend on its order.
	//workflowcheck:ignore
	for k, v := range s.Dedupe {
		v.Read = append([]string(nil), v.Read...)
		v.Touched = append([]string(nil), v.Touched...)
		v.Files = cloneFiles(v.Files)
		out.Dedupe[k] = v
	}
	out.Fetched = append([]string(nil), s.Fetched...)
	sort.Strings(out.Fetched)
	out.Allow = append([]AllowRule(nil), s.Allow...)
	if s.Limits != nil {
		l := *s.Limits
		out.Limits = &l
	}
	out.Usage = s.Usage.Clone()
	out.ResultRefs = append([]string(nil), s.ResultRefs...)
	out.Children = append([]string(nil), s.Children...)
	out.Counted = append([]string(nil), s.Counted...)
	return out
}

func cloneFiles(m map[string]FileState) map[string]FileState {
	if m == nil {
		return nil
	}
	out := make(map[string]FileState, len(m))
	// Copying a map does not depend on its order.
	//workflowcheck:ignore
	for k, v := range m {
		out[k] = v
	}
	return out
}

// HasFetched reports whether the model has the tool's schema.
func (s *RunState) HasFetched(name string) bool {
	i := sort.SearchStrings(s.Fetched, name)
	return i < len(s.Fetched) && s.Fetched[i] == name
}

// MarkFetched records that the model has the tool's schema.
func (s *RunState) MarkFetched(name string) {
	i := sort.SearchStrings(s.Fetched, name)
	if i < len(s.Fetched) && s.Fetched[i] == name {
		return
	}
	s.Fetched = append(s.Fetched, "")
	copy(s.Fetched[i+1:], s.Fetched[i:])
	s.Fetched[i] = name
}

// AddRule records an allow rule unless an equal one exists.
func (s *RunState) AddRule(r AllowRule) {
	for _, have := range s.Allow {
		if have == r {
			return
		}
	}
	s.Allow = append(s.Allow, r)
}
