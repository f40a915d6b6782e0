// Package layers holds the test that keeps the package graph's floors
// straight: nothing below the console and the binaries imports them.
package layers

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/toolround/toolround/"

// top are the packages only binaries and tests may import.
var top = []string{"console", "cmd/"}

// TestNothingBelowImportsTheTop: the engine, the client, the tools, the
// round contract and every internal package stand below the console and
// the binaries, so none of them imports those.
func TestNothingBelowImportsTheTop(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../../...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		if rel == p.ImportPath || isTop(rel) || strings.HasSuffix(rel, "/tests") || rel == "tests" || strings.HasPrefix(rel, "tests/") {
			continue
		}
		n++
		for _, imp := range p.Imports {
			if r := strings.TrimPrefix(imp, module); r != imp && isTop(r) {
				t.Errorf("%s imports %s: only binaries and tests may", rel, r)
			}
		}
	}
	require.Greater(t, n, 20, "the listing found the packages")
}

func isTop(rel string) bool {
	for _, t := range top {
		if rel == strings.TrimSuffix(t, "/") || strings.HasPrefix(rel, t) || strings.HasPrefix(rel, strings.TrimSuffix(t, "/")+"/") {
			return true
		}
	}
	return false
}
