// Package approval decides which tool calls wait for a person and which
// remembered rules may approve them (P1.6, C4, T1, T4, T5). It is pure: no
// Temporal, no I/O except loading the rule key, so the round workflow wires it.
package approval
