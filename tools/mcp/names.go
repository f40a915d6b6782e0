package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const maxNameLen = 64

// sanitize keeps [A-Za-z0-9_-] and turns every other character into '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// toolName is the registry name of a server's tool: mcp_<server>_<tool>,
// sanitised and at most 64 characters. A name that is too long, or that
// taken reports as used, ends in a hash of the original names instead, so
// it stays stable across restarts.
func toolName(server, tool string, taken func(string) bool) (string, bool) {
	base := "mcp_" + sanitize(server) + "_" + sanitize(tool)
	if len(base) <= maxNameLen && !taken(base) {
		return base, true
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	name := base
	if len(name) > maxNameLen-len(suffix) {
		name = name[:maxNameLen-len(suffix)]
	}
	name += suffix
	if taken(name) {
		return "", false
	}
	return name, true
}
