package tools

import (
	"encoding/json"
	"net/url"
	"path"
	"strings"
)

// Default limits of the built-in concurrency keys (SPEC R): one call at a
// time on one path; HostKeyLimit calls at a time to one host when the HTTP
// tools are configured without a bound of their own (a worker passes its
// MAX_CONCURRENT_TOOLS bound, or HTTP_HOST_CONCURRENCY).
const (
	HostKeyLimit = 4
	PathKeyLimit = 1
)

// HostKey is a ConcurrencyKey of the host of the URL in the field named
// field: "host:<host[:port]>", lower-cased. An argument that is not a URL
// with a host has no key.
func HostKey(field string) func(args json.RawMessage) string {
	return func(args json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return ""
		}
		s, _ := m[field].(string)
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" {
			return ""
		}
		return "host:" + strings.ToLower(u.Host)
	}
}

// PathKey is a ConcurrencyKey of the workdir-relative path in the field
// named field: "path:<clean path>", so "./a" and "a" share a key.
func PathKey(field string) func(args json.RawMessage) string {
	return func(args json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return ""
		}
		s, _ := m[field].(string)
		s = strings.TrimSpace(s)
		if s == "" {
			return ""
		}
		return "path:" + path.Clean(s)
	}
}
