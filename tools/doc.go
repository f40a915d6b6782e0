// Package tools holds the tool catalog and registry: what each tool is called,
// its JSON Schema, how it may run (concurrent, read-only, side-effect class,
// timeout, retries) and its handler. It has no Temporal imports: a handler is a
// plain function of a context and its arguments.
package tools
