// Command gencatalog writes client/catalog.json, the built-in tools' schemas
// that client.Tools serves (go generate ./client).
package main

import (
	"fmt"
	"os"

	"github.com/toolround/toolround/client/internal/catalogsnap"
)

func main() {
	b, err := catalogsnap.Build()
	if err == nil {
		err = os.WriteFile("catalog.json", b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}
