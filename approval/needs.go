package approval

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Decisions that need nobody (T2); the others (approved, denied, expired)
// are a person's or the deadline's.
const (
	DecisionNotNeeded = "not_needed"
	DecisionRule      = "rule"
	DecisionAuto      = "auto"
)

// Call is what the confirm gate knows of one call. A round's catalog
// snapshot records one per call, so its false and empty fields are left
// out of that record (the names stay, so records from before read the
// same).
type Call struct {
	Tool string `json:",omitempty"`
	// Args are the call's canonical arguments (tools.Canonical).
	Args string `json:",omitempty"`
	// ReadOnly: the tool's side-effect class for these arguments is
	// read-only (tools.EffectOf).
	ReadOnly bool `json:",omitempty"`
	// MCP tools are read-only for approval only when TrustReadOnlyHints:
	// the operator marked their server "trust_read_only_hints" in
	// MCP_CONFIG. What a server says of its own tools never skips approval.
	MCP                bool `json:",omitempty"`
	TrustReadOnlyHints bool `json:",omitempty"`
	// Queue is a user tool's task queue (Y2): its read-only tools skip
	// approval only when TrustReadOnlyHints (TOOL_QUEUES marks the queue
	// trusted).
	Queue string `json:",omitempty"`
	// SecretsAsk: a call of a user tool (Queue) that sends the values of
	// {{secret:NAME}} placeholders always asks, as an http_request that
	// sends one does (Y3, T5); the round sets it where it runs with that
	// change.
	SecretsAsk bool `json:"-"`
	// ConfirmNever tools only keep the agent's own books (write_todo,
	// ask_user); client tools are answered by the client.
	ConfirmNever bool `json:",omitempty"`
	// Sensitive: the tool says the call reads keys or credentials
	// (tools.Definition.Sensitive).
	Sensitive bool `json:",omitempty"`
	// Kind is what the tool's rules match (tools.Definition.Rules). A call
	// of KindRequest is also checked for its method and the secrets it
	// sends.
	Kind Kind `json:",omitempty"`
	// Reason says why a call of the tool that is not read-only asks
	// (tools.Definition.Reason); "{path}" in it stands for the call's
	// "path" argument. Empty: the generic reason.
	Reason string `json:",omitempty"`
	// ReadsPaths: the call reads the files its "path" or "paths" name, so
	// a path that may hold keys or credentials always asks
	// (tools.Definition.ReadsPaths).
	ReadsPaths bool `json:",omitempty"`
}

// Policy is what approves calls without a person.
type Policy struct {
	// AutoApprove is the round's auto_approve.
	AutoApprove bool
	// DenyAutoApprove is the worker's AUTO_APPROVE=deny: auto_approve is
	// ignored.
	DenyAutoApprove bool
	// Rules are the run's remembered rules, already Verified.
	Rules []Rule
	// Tables is the version of the matcher that reads command patterns
	// (TablesLegacy, TablesV2, T11); zero is TablesLegacy, as rounds
	// recorded before the version was recorded decided.
	Tables int
	// Untested are the tabled programs whose version the worker's probe
	// found outside their table's tested range (VersionProbes, T11): a
	// pattern matches their commands only when it is the very command.
	// The round records them in its snapshot; none in a snapshot
	// recorded before.
	Untested []string
}

// Verdict says whether a call waits for a person, and why.
type Verdict struct {
	// Ask: the call waits for a person.
	Ask bool
	// Always: neither auto_approve nor allow_turn approves the call. A
	// sensitive read also ignores rules; a call that sends a secret is
	// approved only by a rule that allows that secret for that host.
	Always bool
	// Decision is why the call does not ask (DecisionNotNeeded,
	// DecisionRule, DecisionAuto); empty when it asks.
	Decision string
	// Rules are the rules that approved the call (Decision rule).
	Rules []Rule
	// Reasons say, in a few words each, why the call asks or would ask.
	Reasons []string
}

// SecretPlaceholder is a {{secret:NAME}} placeholder, NAME its first
// group: what the tools of KindRequest (tools/web) and a tool worker's
// calls (toolworker) fill from the secret store, and what approval reads as
// the secrets a call uses. One pattern, so that what a check sees is what a
// tool fills.
var SecretPlaceholder = regexp.MustCompile(`\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}`)

// methodOverride headers make a server treat a request as another method.
var methodOverride = []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}

// Needs applies C4 and T5 to one call: whether it asks, and why.
//
//   - A read of a sensitive path always asks: no rule, auto_approve or
//     allow_turn approves it.
//   - ConfirmNever tools never ask.
//   - Read-only calls never ask. http_request is read-only only for GET,
//     HEAD and OPTIONS (any case) without a method-override header; an MCP
//     tool only when its server is trusted.
//   - An http_request that uses {{secret:NAME}} (url, headers, body) asks,
//     whatever its method, unless for every secret a rule with that Secret
//     matches the call; auto_approve and allow_turn do not approve it.
//   - Every other call asks unless a rule matches (Match) or the round runs
//     with auto_approve and the worker does not deny it.
func Needs(c Call, p Policy) (v Verdict) {
	defer func() {
		if recover() != nil {
			v = Verdict{Ask: true, Always: true, Reasons: []string{"its arguments could not be checked"}}
		}
	}()
	args, argsOK := decodeArgs(c.Args)
	if c.Sensitive {
		return Verdict{Ask: true, Always: true, Reasons: []string{"it reads a file that may hold keys or credentials"}}
	}
	if c.ReadsPaths {
		if paths, ok := callPaths(args); ok {
			for _, path := range paths {
				if SensitivePath(path) {
					return Verdict{Ask: true, Always: true, Reasons: []string{"it reads " + quoteShort(path) + ", which may hold keys or credentials"}}
				}
			}
		} else if !argsOK || sensitiveInText(c.Args) {
			return Verdict{Ask: true, Always: true, Reasons: []string{"its paths could not be checked for keys or credentials"}}
		}
	}
	if c.ConfirmNever {
		return Verdict{Decision: DecisionNotNeeded}
	}

	readOnly := c.ReadOnly
	var reasons []string
	if c.MCP && !c.TrustReadOnlyHints {
		if readOnly {
			reasons = append(reasons, "an MCP tool whose server is not trusted to mark its tools read-only (trust_read_only_hints)")
		}
		readOnly = false
	}
	if c.Queue != "" && !c.TrustReadOnlyHints {
		if readOnly {
			reasons = append(reasons, "a tool of queue "+c.Queue+", which TOOL_QUEUES does not mark trusted")
		}
		readOnly = false
	}
	var secrets []string
	if c.Kind == KindRequest {
		secrets = SecretNames(c.Args)
		method, why := httpMethodSafety(args, argsOK)
		if why != "" {
			readOnly = false
			reasons = append(reasons, why)
		} else if !readOnly {
			reasons = append(reasons, "it sends an HTTP "+method)
		}
		host := "its host"
		if u, ok := callURL(c.Kind, args); ok && argsOK {
			host = u.host
		}
		for _, s := range secrets {
			reasons = append(reasons, fmt.Sprintf("it sends secret %s to %s", s, host))
		}
	}
	if c.Queue != "" && c.SecretsAsk {
		// A user tool gets the values of the secrets its call names (Y3):
		// such a call asks every time, as an http_request that sends one.
		secrets = SecretNames(c.Args)
		for _, s := range secrets {
			reasons = append(reasons, fmt.Sprintf("it sends secret %s to %s, a tool of queue %s", s, c.Tool, c.Queue))
		}
	}
	if readOnly && len(secrets) == 0 {
		return Verdict{Decision: DecisionNotNeeded}
	}
	if len(reasons) == 0 {
		reasons = append(reasons, reasonFor(c, args))
	}
	v = Verdict{Ask: true, Always: len(secrets) > 0, Reasons: reasons}

	// An exact rule is a person's approval of these very arguments,
	// secrets included.
	for _, r := range p.Rules {
		if r.Tool == c.Tool && r.Pattern == "" && r.Secret == "" && r.Args != "" && r.Args == c.Args {
			return Verdict{Decision: DecisionRule, Rules: []Rule{r}, Reasons: reasons}
		}
	}
	var used []Rule
	approved := readOnly
	if !approved {
		used, approved = whichUntested(p.Tables, p.Untested, p.Rules, c.Kind, c.Tool, c.Args)
	}
	if approved && len(secrets) > 0 {
		granted, ok := secretsAllowed(p.Rules, c, args, secrets)
		if !ok {
			return v
		}
		used = append(used, granted...)
	}
	if approved {
		return Verdict{Decision: DecisionRule, Rules: used, Reasons: reasons}
	}
	if p.AutoApprove && !p.DenyAutoApprove && len(secrets) == 0 {
		return Verdict{Decision: DecisionAuto, Reasons: reasons}
	}
	return v
}

// httpMethodSafety returns the method of an http_request and, when the
// call is not a safe read, why.
func httpMethodSafety(args map[string]json.RawMessage, ok bool) (method, why string) {
	if !ok {
		return "", "its arguments could not be read"
	}
	m, ok := stringField(args, "method")
	if !ok {
		return "", "its method is not a string"
	}
	method = normMethod(m)
	if raw, has := field(args, "headers"); has && string(raw) != "null" {
		var hs map[string]json.RawMessage
		if json.Unmarshal(raw, &hs) != nil {
			return method, "its headers could not be read"
		}
		for k := range hs {
			for _, o := range methodOverride {
				if strings.EqualFold(strings.TrimSpace(k), o) {
					return method, "it asks the server to take it as another method (" + o + ")"
				}
			}
		}
	}
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return method, ""
	}
	return method, "it sends an HTTP " + quoteShort(method)
}

// SecretNames are the {{secret:NAME}} placeholders anywhere in the
// arguments, sorted and unique. JSON escapes are decoded first, so an
// escaped placeholder counts too.
func SecretNames(args string) []string {
	seen := map[string]bool{}
	add := func(s string) {
		for _, m := range SecretPlaceholder.FindAllStringSubmatch(s, -1) {
			seen[m[1]] = true
		}
	}
	add(args)
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				add(v)
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					add(k)
					walk(e)
				}
			}
		}
		walk(v)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// secretsAllowed finds, for every secret, a rule that allows it for the
// call's URL.
func secretsAllowed(rules []Rule, c Call, args map[string]json.RawMessage, secrets []string) ([]Rule, bool) {
	u, ok := callURL(c.Kind, args)
	if !ok {
		return nil, false
	}
	var used []Rule
	for _, s := range secrets {
		found := false
		for _, r := range rules {
			if r.Tool != c.Tool || r.Secret != s || r.Pattern == "" {
				continue
			}
			if h, err := parseHTTPPattern(r.Pattern); err == nil && h.match(u) {
				used = append(used, r)
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return used, true
}

// reasonFor is the reason a call that is not read-only asks.
func reasonFor(c Call, args map[string]json.RawMessage) string {
	if c.Reason != "" {
		if strings.Contains(c.Reason, "{path}") {
			return strings.ReplaceAll(c.Reason, "{path}", pathOf(args))
		}
		return c.Reason
	}
	if c.MCP {
		return "an MCP tool that may change things"
	}
	return "it may change things"
}

func pathOf(args map[string]json.RawMessage) string {
	if p, ok := stringField(args, "path"); ok && p != "" {
		return quoteShort(p)
	}
	return "a file"
}

// sensitiveInText looks for sensitive names in arguments that do not decode.
func sensitiveInText(s string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("\"[],{}: \t\n", r) }) {
		if SensitivePath(f) {
			return true
		}
	}
	return false
}

func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}
