// Package wire holds what only the worker reads: the names its activities
// are registered under and their payloads, which pass between the round's
// workflows (internal/workflows) and their activities
// (internal/activities). They are in workflow histories as JSON: a field's
// JSON name never changes. The contract a client or a tool author uses is
// package round.
package wire
