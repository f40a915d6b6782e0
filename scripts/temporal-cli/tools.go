//go:build tools

// Package tools pins the Temporal CLI that scripts/lib.sh builds for the
// dev server, with a newer modernc.org/sqlite than the CLI's own go.mod names.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
