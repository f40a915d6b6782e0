package round

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Limit names (B1): the fields of Limits, the names in reasons, in
// Usage.Grown and in LimitCount.
const (
	LimitCalls       = "max_calls"
	LimitCommands    = "max_commands"
	LimitWrites      = "max_writes"
	LimitSeconds     = "max_seconds"
	LimitModelTokens = "max_model_tokens"
)

// LimitUnverified is named in a call's limits when the run's usage did not
// verify on a worker with WORKER_LIMITS (B1), in rounds recorded before
// T15 (which refuses such a usage as an input error): the counts the
// client carried are unknown, so every call of the round asks. It is not a
// field of Limits and approvals do not grow it.
const LimitUnverified = "unverified_usage"

// LimitNames are the limits in the order reasons and listings name them.
var LimitNames = []string{LimitCalls, LimitCommands, LimitWrites, LimitSeconds, LimitModelTokens}

// MaxLimit is the largest value a limit takes; the smallest is 1.
const MaxLimit = 1_000_000_000

// Limits bound a run (B1): how many calls reach pass 2 (MaxCalls), how many
// of them run commands (MaxCommands: run_command, background_command,
// script_*) or have side effects (MaxWrites), the wall time from the run's
// first round (MaxSeconds) and, for agent runs, the model tokens
// (MaxModelTokens, input and output as the API reports them). Zero: no
// limit. A call past a limit waits for a person (KindLimit).
type Limits struct {
	MaxCalls       int64 `json:"max_calls,omitempty"`
	MaxCommands    int64 `json:"max_commands,omitempty"`
	MaxWrites      int64 `json:"max_writes,omitempty"`
	MaxSeconds     int64 `json:"max_seconds,omitempty"`
	MaxModelTokens int64 `json:"max_model_tokens,omitempty"`

	// zeros are the fields the JSON set to 0 explicitly: outside the
	// bounds, unlike an absent field.
	zeros []string
}

// UnmarshalJSON decodes the fields and remembers the ones set to 0, which
// Validate refuses.
func (l *Limits) UnmarshalJSON(b []byte) error {
	type plain Limits
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = Limits(p)
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) == nil {
		for _, name := range LimitNames {
			for k, v := range raw {
				if strings.EqualFold(k, name) && string(bytes.TrimSpace(v)) == "0" {
					l.zeros = append(l.zeros, name)
				}
			}
		}
	}
	return nil
}

// Get returns the limit of that name; 0 when it is not set.
func (l *Limits) Get(name string) int64 {
	if l == nil {
		return 0
	}
	switch name {
	case LimitCalls:
		return l.MaxCalls
	case LimitCommands:
		return l.MaxCommands
	case LimitWrites:
		return l.MaxWrites
	case LimitSeconds:
		return l.MaxSeconds
	case LimitModelTokens:
		return l.MaxModelTokens
	}
	return 0
}

func (l *Limits) set(name string, v int64) {
	switch name {
	case LimitCalls:
		l.MaxCalls = v
	case LimitCommands:
		l.MaxCommands = v
	case LimitWrites:
		l.MaxWrites = v
	case LimitSeconds:
		l.MaxSeconds = v
	case LimitModelTokens:
		l.MaxModelTokens = v
	}
}

// Empty reports whether no limit is set.
func (l *Limits) Empty() bool {
	for _, name := range LimitNames {
		if l.Get(name) != 0 {
			return false
		}
	}
	return true
}

// Validate refuses a limit outside 1..MaxLimit; an absent one is no limit.
func (l *Limits) Validate() error {
	if l == nil {
		return nil
	}
	if len(l.zeros) > 0 {
		return fmt.Errorf("limits.%s is 0; a limit must be between 1 and %d, or absent for none", l.zeros[0], MaxLimit)
	}
	for _, name := range LimitNames {
		if v := l.Get(name); v < 0 || v > MaxLimit {
			return fmt.Errorf("limits.%s is %d; a limit must be between 1 and %d, or absent for none", name, v, MaxLimit)
		}
	}
	return nil
}

// Over returns l with the fields that o sets taken from o.
func (l *Limits) Over(o *Limits) Limits {
	var out Limits
	for _, name := range LimitNames {
		v := l.Get(name)
		if w := o.Get(name); w != 0 {
			v = w
		}
		out.set(name, v)
	}
	return out
}

// Within returns the tighter of l and bound for each limit: bound is the
// worker's WORKER_LIMITS, which no input raises.
func (l *Limits) Within(bound *Limits) Limits {
	var out Limits
	for _, name := range LimitNames {
		v, b := l.Get(name), bound.Get(name)
		if v == 0 || (b != 0 && b < v) {
			v = b
		}
		out.set(name, v)
	}
	return out
}

// ParseLimits reads limits as JSON ({"max_calls": 20, ...}), strictly
// (U8): an unknown field or a value outside the bounds is an error. The
// empty string is no limit.
func ParseLimits(s, what string) (Limits, error) {
	var l Limits
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&l); err != nil {
		return Limits{}, fmt.Errorf("%s: %v", what, err)
	}
	if dec.More() {
		return Limits{}, fmt.Errorf("%s: there is data after its JSON object", what)
	}
	if err := CheckFields([]byte(s), &l, what); err != nil {
		return Limits{}, err
	}
	if err := l.Validate(); err != nil {
		return Limits{}, fmt.Errorf("%s: %v", what, err)
	}
	return l, nil
}

// Usage is what a run did, counted for its limits (B1) and its counted
// rules (B2), carried in the run state across rounds and continue-as-new.
type Usage struct {
	// Calls, Commands and Writes count the calls that reached pass 2 (ran
	// or were reconciled), by the tool they ran.
	Calls    int64 `json:"calls,omitempty"`
	Commands int64 `json:"commands,omitempty"`
	Writes   int64 `json:"writes,omitempty"`
	// ModelTokens are an agent run's model tokens so far.
	ModelTokens int64 `json:"model_tokens,omitempty"`
	// Started is when the run's first round started (max_seconds).
	Started *time.Time `json:"started,omitempty"`
	// Grown is what approvals of calls past a limit added to it, by limit
	// name.
	Grown map[string]int64 `json:"grown,omitempty"`
	// Rules counts the calls each counted rule (AllowRule.UpTo) approved,
	// by RuleCountKey.
	Rules map[string]int64 `json:"rules,omitempty"`
	// Reserved are the shares of the run's limits its background
	// subagents were given when they started (G2, T15), by workflow id:
	// counted at once, and when a child ends only what it did past its
	// share is added.
	Reserved map[string]*Usage `json:"reserved,omitempty"`
	// Round is the round of the run that signed the usage (T15): only the
	// run's next round takes it.
	Round int `json:"round,omitempty"`
	// MAC binds the usage to its session, run and Round, keyed with the
	// workers' rule key (approval.RoundUsageMAC): a usage that does not
	// verify, or another round's, is an input error (T15). Rounds
	// recorded before T15 signed it for session and run only, and only on
	// a worker with WORKER_LIMITS.
	MAC string `json:"mac,omitempty"`
}

// Count returns the count a limit is compared with, at now.
func (u *Usage) Count(name string, now time.Time) int64 {
	if u == nil {
		return 0
	}
	switch name {
	case LimitCalls:
		return u.Calls
	case LimitCommands:
		return u.Commands
	case LimitWrites:
		return u.Writes
	case LimitModelTokens:
		return u.ModelTokens
	case LimitSeconds:
		if u.Started == nil {
			return 0
		}
		return int64(now.Sub(*u.Started) / time.Second)
	}
	return 0
}

// Clone returns a deep copy; nil stays nil.
func (u *Usage) Clone() *Usage {
	if u == nil {
		return nil
	}
	out := *u
	if u.Started != nil {
		t := *u.Started
		out.Started = &t
	}
	out.Grown = cloneCounts(u.Grown)
	out.Rules = cloneCounts(u.Rules)
	if u.Reserved != nil {
		out.Reserved = make(map[string]*Usage, len(u.Reserved))
		// Copying a map does not depend on its order.
		//workflowcheck:ignore
		for k, v := range u.Reserved {
			out.Reserved[k] = v.Clone()
		}
	}
	return &out
}

func cloneCounts(m map[string]int64) map[string]int64 {
	if m == nil {
		return nil
	}
	out := make(map[string]int64, len(m))
	// Copying a map does not depend on its order.
	//workflowcheck:ignore
	for k, v := range m {
		out[k] = v
	}
	return out
}

// LimitCount is one limit of a run as pending, the inbox and agent-status
// show it: its name, what the run did and the limit (grown by approvals).
type LimitCount struct {
	Limit string `json:"limit"`
	Count int64  `json:"count"`
	Max   int64  `json:"max"`
}

// Canonical is the encoding of u that its MAC covers: every field but the
// MAC, as JSON (maps in key order, the time in RFC 3339 in UTC).
func (u Usage) Canonical() []byte {
	u.MAC = ""
	if u.Started != nil {
		t := u.Started.UTC()
		u.Started = &t
	}
	b, _ := json.Marshal(u)
	return b
}

// Share is the part of l that one of n runs started together gets of what
// is left of it after u (G1): for every limit set, its rest (grown by
// approvals) over n, at least 1. Nil when l sets none. Rounds recorded
// before T15 gave it; since, FloorShare.
func (l *Limits) Share(u *Usage, n int, now time.Time) *Limits {
	if l == nil || l.Empty() || n <= 0 {
		return nil
	}
	var out Limits
	for _, name := range LimitNames {
		if v := l.Get(name); v != 0 {
			out.set(name, min(MaxLimit, max(1, l.rest(u, name, now)/int64(n))))
		}
	}
	return &out
}

// rest is what is left of the limit name after u: the limit, grown by
// approvals, less what the run did.
func (l *Limits) rest(u *Usage, name string, now time.Time) int64 {
	v := l.Get(name)
	if u != nil {
		v += u.Grown[name] - u.Count(name, now)
	}
	return v
}

// FloorShare is the part of l that each of n runs started together gets
// of what is left of it after u (G1, T15): for every limit set, its rest
// (grown by approvals) over n, rounded down. A share of 0 cannot be a
// limit (0 is none): such a limit is 1 in the share and named in zero, and
// the run that takes it starts 1 below it (AgentInput.ZeroShare). Nil
// when l sets none.
func (l *Limits) FloorShare(u *Usage, n int, now time.Time) (share *Limits, zero []string) {
	if l == nil || l.Empty() || n <= 0 {
		return nil, nil
	}
	var out Limits
	for _, name := range LimitNames {
		if l.Get(name) == 0 {
			continue
		}
		v := min(MaxLimit, max(0, l.rest(u, name, now)/int64(n)))
		if v == 0 {
			zero = append(zero, name)
			v = 1
		}
		out.set(name, v)
	}
	return &out, zero
}

// Reservation is what a share reserves of the run that gives it (G2,
// T15): the counts of its limits, 0 for those named in zero.
func (l *Limits) Reservation(zero []string) *Usage {
	if l == nil {
		return nil
	}
	var z Limits
	for _, name := range LimitNames {
		if !slices.Contains(zero, name) {
			z.set(name, l.Get(name))
		}
	}
	return &Usage{Calls: z.MaxCalls, Commands: z.MaxCommands, Writes: z.MaxWrites, ModelTokens: z.MaxModelTokens}
}

// Past is what u did beyond r, count by count, never below 0: what a
// background subagent did past the share it reserved.
func (u *Usage) Past(r *Usage) *Usage {
	if u == nil {
		return nil
	}
	if r == nil {
		return u.Counts()
	}
	return &Usage{Calls: max(0, u.Calls-r.Calls), Commands: max(0, u.Commands-r.Commands),
		Writes: max(0, u.Writes-r.Writes), ModelTokens: max(0, u.ModelTokens-r.ModelTokens)}
}

// Counts is u's counts alone (calls, commands, writes, model tokens), as a
// subagent's run reports them to the run that started it (G1).
func (u *Usage) Counts() *Usage {
	if u == nil {
		return nil
	}
	return &Usage{Calls: u.Calls, Commands: u.Commands, Writes: u.Writes, ModelTokens: u.ModelTokens}
}

// Add adds o's counts to u.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	u.Calls += o.Calls
	u.Commands += o.Commands
	u.Writes += o.Writes
	u.ModelTokens += o.ModelTokens
}
