package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Kind is how the rule patterns of a tool are read: what its remembered
// rules match in its calls (T4). A tool's definition names its kind
// (tools.Definition.Rules); this package knows no tool by name.
type Kind string

const (
	// KindExact tools have no pattern language: the only pattern is "*",
	// every call of the tool.
	KindExact Kind = ""
	// KindCommand: shell patterns over "command" (shell.go).
	KindCommand Kind = "command"
	// KindPath: path globs over "path", or over each of "paths".
	KindPath Kind = "path"
	// KindRequest: "METHOD scheme://host[:port]/path" over "method" and
	// "url". A call of such a tool is read-only only for a safe method, and
	// may send {{secret:NAME}} placeholders (T5).
	KindRequest Kind = "request"
	// KindURL: "METHOD scheme://host[:port]/path" over "url", which the
	// tool always GETs.
	KindURL Kind = "url"
	// KindDownload: "[GET ]URL PATHGLOB" over "url" and "path".
	KindDownload Kind = "download"
)

// ValidatePattern says why pattern cannot be a rule for tool, whose rules
// are of kind, or nil. A confirmation that asks to remember an invalid
// pattern should be refused with this error, not stored. The tool's name
// is only told in the error.
//
//   - KindCommand (run_command, background_command): one command of literal
//     words, such as `git *` or `go test ./...` (see the Shell patterns
//     comment).
//   - KindPath (edit_file, remove_file, restore_file, read_files,
//     file_history): a glob
//     over the workdir-relative, cleaned path: `*` within a folder, `**`
//     across folders, such as `src/**/*.go`; never absolute or with `..`.
//     A path inside a .git folder matches only a pattern that names .git.
//   - KindRequest (http_request), KindURL (fetch_page): `METHOD
//     scheme://host[:port]/path`, such as
//     `GET https://api.example.com/v1/*`. METHOD is a method or `*`; the
//     host is exact or `*.example.com` (any subdomain, not example.com
//     itself); `*` in the path matches any characters, `/` included. The URL
//     of a call is normalised first: scheme and host in lower case, a
//     trailing dot and the default port dropped, the path percent-decoded;
//     its query is not part of what a pattern sees. A URL with user
//     information, or with `.` or `..` path segments (encoded or not),
//     never matches.
//   - KindDownload (download_file): `[GET ]URL PATHGLOB`: the URL as for
//     http_request and the path as for the file tools.
//   - KindExact (any other tool): `*` only, meaning every call of the tool.
//
// A command pattern over a program without an option table (T11) is
// refused: it would never match.
func ValidatePattern(kind Kind, tool, pattern string) error {
	return ValidatePatternAt(TablesCurrent, kind, tool, pattern)
}

// ValidatePatternAt is ValidatePattern for one version of the matcher
// (TablesLegacy, TablesV2; zero is TablesLegacy).
func ValidatePatternAt(tables int, kind Kind, tool, pattern string) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("the pattern could not be read")
		}
	}()
	c, err := compile(kind, tool, pattern)
	if err == nil && kind == KindCommand && tables >= TablesV2 && !tabledPatternOK(c.cmd) {
		return fmt.Errorf("%s has no option table, so a pattern over it would never match (T11): remember the exact command instead", c.cmd.words[0])
	}
	return err
}

// compiled is a pattern ready to match calls of one tool.
type compiled struct {
	cmd  cmdPattern
	file string
	http httpPattern
}

func compile(kind Kind, tool, pattern string) (compiled, error) {
	switch kind {
	case KindCommand:
		p, err := parseCommandPattern(pattern)
		return compiled{cmd: p}, err
	case KindPath:
		return compiled{file: pattern}, validateFileGlob(pattern)
	case KindRequest, KindURL:
		h, err := parseHTTPPattern(pattern)
		return compiled{http: h}, err
	case KindDownload:
		f := strings.Fields(pattern)
		if len(f) == 3 {
			if f[0] != "GET" && f[0] != "*" {
				return compiled{}, errors.New(tool + " only GETs: write `GET URL PATHGLOB` or `URL PATHGLOB`")
			}
			f = f[1:]
		}
		if len(f) != 2 {
			return compiled{}, errors.New("a " + tool + " pattern is `URL PATHGLOB`, such as `https://example.com/releases/* vendor/**`")
		}
		h, err := parseHTTPPattern("GET " + f[0])
		if err != nil {
			return compiled{}, err
		}
		return compiled{http: h, file: f[1]}, validateFileGlob(f[1])
	}
	if arg, ok := subjectArg(kind); ok {
		return compiled{file: pattern}, validateSubjectGlob(tool, arg, pattern)
	}
	if pattern != "*" {
		return compiled{}, fmt.Errorf("%s has no pattern language: remember the exact call (no pattern), or `*` for every call of it", tool)
	}
	return compiled{}, nil
}

// Match reports whether rules approve a call of tool, whose rules are of
// kind, with canonicalArgs (T4). Rules must have been checked with Verified
// first; rules that only allow a secret (Secret set) approve nothing on
// their own.
//
// Match is the current version of the matcher (TablesCurrent); MatchAt
// names one.
func Match(rules []Rule, kind Kind, tool, canonicalArgs string) bool {
	return MatchAt(TablesCurrent, rules, kind, tool, canonicalArgs)
}

// MatchAt is Match with one version of the matcher: TablesLegacy (or zero)
// as rounds recorded before T11 decided, TablesV2 with the option tables.
func MatchAt(tables int, rules []Rule, kind Kind, tool, canonicalArgs string) bool {
	_, ok := WhichAt(tables, rules, kind, tool, canonicalArgs)
	return ok
}

// Which is Match that also returns the rules that approved the call (more
// than one when the commands of one script match different rules).
func Which(rules []Rule, kind Kind, tool, canonicalArgs string) (used []Rule, ok bool) {
	return WhichAt(TablesCurrent, rules, kind, tool, canonicalArgs)
}

// WhichAt is Which with one version of the matcher (MatchAt).
func WhichAt(tables int, rules []Rule, kind Kind, tool, canonicalArgs string) (used []Rule, ok bool) {
	return whichUntested(tables, nil, rules, kind, tool, canonicalArgs)
}

// whichUntested is WhichAt where the programs of untested, outside their
// table's tested range, match exact command patterns only (T11).
func whichUntested(tables int, untested []string, rules []Rule, kind Kind, tool, canonicalArgs string) (used []Rule, ok bool) {
	defer func() {
		if recover() != nil {
			used, ok = nil, false
		}
	}()
	return whichWith(tables, untested, rules, kind, tool, canonicalArgs)
}

func which(tables int, rules []Rule, kind Kind, tool, canonicalArgs string) ([]Rule, bool) {
	return whichWith(tables, nil, rules, kind, tool, canonicalArgs)
}

func whichWith(tables int, untested []string, rules []Rule, kind Kind, tool, canonicalArgs string) ([]Rule, bool) {
	var patterned []int
	for i, r := range rules {
		if r.Tool != tool || r.Secret != "" {
			continue
		}
		if r.Pattern == "" {
			if r.Args != "" && r.Args == canonicalArgs {
				return []Rule{r}, true
			}
			continue
		}
		patterned = append(patterned, i)
	}
	if len(patterned) == 0 {
		return nil, false
	}
	args, ok := decodeArgs(canonicalArgs)
	if !ok {
		return nil, false
	}
	switch kind {
	case KindCommand:
		return matchCommand(tables, untested, rules, patterned, args)
	case KindPath, KindRequest, KindURL, KindDownload:
	default:
		arg, isSubject := subjectArg(kind)
		subject, hasSubject := subjectOf(args, arg)
		for _, i := range patterned {
			if rules[i].Pattern == "*" || (isSubject && hasSubject && globMatch(rules[i].Pattern, subject)) {
				return []Rule{rules[i]}, true
			}
		}
		return nil, false
	}
	if kind == KindPath {
		return matchPathsAcross(tables, rules, patterned, tool, args)
	}
	// HTTP and download calls: one rule matches the URL (and the path).
	for _, i := range patterned {
		c, err := compile(kind, tool, rules[i].Pattern)
		if err == nil && matchOne(tables, kind, c, args) {
			return []Rule{rules[i]}, true
		}
	}
	return nil, false
}

// matchPathsAcross lets each path of a read_files call match its own rule.
func matchPathsAcross(tables int, rules []Rule, patterned []int, tool string, args map[string]json.RawMessage) ([]Rule, bool) {
	paths, ok := callPaths(args)
	if !ok {
		return nil, false
	}
	var used []Rule
	seen := map[int]bool{}
	for _, p := range paths {
		found := false
		for _, i := range patterned {
			if c, err := compile(KindPath, tool, rules[i].Pattern); err == nil && fileMatch(tables, c.file, p) {
				if !seen[i] {
					seen[i] = true
					used = append(used, rules[i])
				}
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

func matchCommand(tables int, untested []string, rules []Rule, patterned []int, args map[string]json.RawMessage) ([]Rule, bool) {
	script, ok := stringField(args, "command")
	if !ok || strings.TrimSpace(script) == "" {
		return nil, false
	}
	var pats []cmdPattern
	for _, i := range patterned {
		p, err := parseCommandPattern(rules[i].Pattern)
		if err != nil {
			continue
		}
		p.rule = i
		pats = append(pats, p)
	}
	if len(pats) == 0 {
		return nil, false
	}
	var out map[string]bool
	if len(untested) > 0 {
		out = make(map[string]bool, len(untested))
		for _, p := range untested {
			out[p] = true
		}
	}
	usedIdx, ok := commandAllowed(script, pats, tables, out)
	if !ok {
		return nil, false
	}
	var used []Rule
	for i := range rules {
		if usedIdx[i] {
			used = append(used, rules[i])
		}
	}
	return used, true
}

func matchOne(tables int, kind Kind, c compiled, args map[string]json.RawMessage) bool {
	switch kind {
	case KindRequest, KindURL:
		u, ok := callURL(kind, args)
		return ok && c.http.match(u)
	case KindDownload:
		u, ok := callURL(kind, args)
		if !ok || !c.http.match(u) {
			return false
		}
		p, ok := stringField(args, "path")
		return ok && fileMatch(tables, c.file, p)
	}
	return false
}

// decodeArgs reads a call's arguments object. Two keys that differ only in
// letter case are refused: Go's decoder gives a tool's handler either of
// them, so a rule must not look at the other.
func decodeArgs(canonical string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(canonical), &m) != nil || m == nil {
		return nil, false
	}
	folded := make(map[string]bool, len(m))
	for k := range m {
		f := strings.ToLower(k)
		if folded[f] {
			return nil, false
		}
		folded[f] = true
	}
	return m, true
}

// field returns the value of the key that Go's decoder would fill a
// `json:"name"` field from: the key equal to name without regard to case.
func field(args map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := args[name]; ok {
		return v, true
	}
	for k, v := range args {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// stringField is a string argument; absent or null gives "" and true.
func stringField(args map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := field(args, name)
	if !ok || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// callPaths are the paths of a file tool call: "path", or "paths".
func callPaths(args map[string]json.RawMessage) ([]string, bool) {
	if raw, ok := field(args, "paths"); ok {
		var ps []string
		if json.Unmarshal(raw, &ps) != nil || len(ps) == 0 {
			return nil, false
		}
		if _, also := field(args, "path"); also {
			return nil, false
		}
		return ps, true
	}
	p, ok := stringField(args, "path")
	if !ok || p == "" {
		return nil, false
	}
	return []string{p}, true
}

// cleanRelPath is a workdir-relative path cleaned lexically, or false when
// it is absolute, leaves the workdir or holds characters tools read
// differently.
func cleanRelPath(p string) (string, bool) {
	if p == "" || strings.ContainsAny(p, "\x00\\") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "", false
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

func validateFileGlob(g string) error {
	if g == "" {
		return errors.New("the path pattern is empty")
	}
	if strings.HasPrefix(g, "/") || strings.HasPrefix(g, "~") || strings.Contains(g, "\\") {
		return errors.New("a path pattern is relative to the workdir, such as `src/**/*.go`")
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == ".." {
			return errors.New("a path pattern cannot leave the workdir with `..`")
		}
	}
	if !doublestar.ValidatePattern(g) {
		return fmt.Errorf("%q is not a valid path pattern", g)
	}
	return nil
}

// fileMatch reports whether the path glob of a file-tool rule matches the
// path p. With TablesV3 a path of the protected set never matches
// (ProtectedPath, T12): such a call asks.
func fileMatch(tables int, glob, p string) bool {
	c, ok := cleanRelPath(p)
	if !ok {
		return false
	}
	if tables >= TablesV3 && ProtectedPath(c) {
		return false
	}
	// A repository's config and hooks make a later `git` run any program:
	// only a pattern that names .git reaches into one.
	if inGitDir(c) && !inGitDir(glob) {
		return false
	}
	m, err := doublestar.Match(glob, c)
	return err == nil && m
}

// normURL is a URL reduced to what patterns see.
type normURL struct {
	method, scheme, host, port, path string
}

// httpPattern is a parsed `METHOD scheme://host[:port]/path` pattern.
type httpPattern struct {
	method       string // upper case, or "*"
	scheme, port string
	host         string // exact host, or the suffix after "*."
	anySub       bool
	path         string // glob; '*' crosses '/'
}

func parseHTTPPattern(p string) (httpPattern, error) {
	f := strings.Fields(p)
	if len(f) != 2 {
		return httpPattern{}, errors.New("an HTTP pattern is `METHOD URL`, such as `GET https://api.example.com/v1/*`")
	}
	method := strings.ToUpper(f[0])
	if method != "*" && !isToken(method) {
		return httpPattern{}, fmt.Errorf("%q is not an HTTP method", f[0])
	}
	raw := f[1]
	var h httpPattern
	h.method = method
	// "*.example.com" is the only wildcard a host may have.
	if i := strings.Index(raw, "://*."); i >= 0 {
		h.anySub = true
		raw = raw[:i+3] + raw[i+5:]
	}
	if strings.Contains(raw, "?") || strings.Contains(raw, "#") {
		return httpPattern{}, errors.New("an HTTP pattern has no query or fragment: a call's query is not matched")
	}
	u, ok := normalizeURL(raw)
	if !ok {
		return httpPattern{}, fmt.Errorf("%q is not an http or https URL without user information", f[1])
	}
	if strings.Contains(u.host, "*") {
		return httpPattern{}, errors.New("a host pattern is exact or `*.example.com`")
	}
	h.scheme, h.host, h.port, h.path = u.scheme, u.host, u.port, u.path
	return h, nil
}

func (h httpPattern) match(u normURL) bool {
	if h.method != "*" && h.method != u.method {
		return false
	}
	if h.scheme != u.scheme || h.port != u.port {
		return false
	}
	if h.anySub {
		if !strings.HasSuffix(u.host, "."+h.host) {
			return false
		}
	} else if u.host != h.host {
		return false
	}
	return globMatch(h.path, u.path)
}

// callURL is the method and normalised URL of an HTTP call: the "method"
// argument for KindRequest, GET for the others.
func callURL(kind Kind, args map[string]json.RawMessage) (normURL, bool) {
	raw, ok := stringField(args, "url")
	if !ok {
		return normURL{}, false
	}
	u, ok := normalizeURL(strings.TrimSpace(raw))
	if !ok {
		return normURL{}, false
	}
	u.method = "GET"
	if kind == KindRequest {
		m, ok := stringField(args, "method")
		if !ok {
			return normURL{}, false
		}
		u.method = normMethod(m)
		if !isToken(u.method) {
			return normURL{}, false
		}
	}
	return u, true
}

// normMethod is the method as http_request sends it: upper case, GET when
// empty.
func normMethod(m string) string {
	m = strings.ToUpper(strings.TrimSpace(m))
	if m == "" {
		return "GET"
	}
	return m
}

func isToken(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// normalizeURL reduces raw to scheme, host, port and decoded path; ok is
// false for anything a pattern must not vouch for: other schemes, user
// information, opaque URLs, placeholders or odd characters in the host,
// control characters in the path.
func normalizeURL(raw string) (normURL, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return normURL{}, false
	}
	var n normURL
	n.scheme = strings.ToLower(u.Scheme)
	def := map[string]string{"http": "80", "https": "443"}[n.scheme]
	if def == "" {
		return normURL{}, false
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return normURL{}, false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '*') {
			return normURL{}, false // zones, placeholders, escapes
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	n.host = host
	if p := u.Port(); p != "" {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v > 65535 {
			return normURL{}, false
		}
		if strconv.Itoa(v) != def {
			n.port = strconv.Itoa(v)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return normURL{}, false
	}
	p := u.Path
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return normURL{}, false
		}
	}
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return normURL{}, false
	}
	// A server may or may not resolve `.` and `..` before routing: a path
	// with them matches no pattern, rather than the one cleaning suggests.
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return normURL{}, false
		}
	}
	n.path = p
	return n, true
}
