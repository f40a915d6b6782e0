package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSchemaValueEncodesAsJSONDoes: a configured value spliced into a Schema
// reads as json.Marshal writes it, so a schema moved from Go maps to JSON
// text keeps its bytes (the published catalog does not change).
func TestSchemaValueEncodesAsJSONDoes(t *testing.T) {
	got := Schema(`{"enum":` + SchemaValue([]string{"a", "b"}) + `,"maximum":` + SchemaValue(300.0) +
		`,"description":` + SchemaValue("run by `sh -c`; \"quotes\" && pipes") + `}`)
	require.Equal(t, `{"enum":["a","b"],"maximum":300,"description":"run by `+"`sh -c`"+`; \"quotes\" \u0026\u0026 pipes"}`, string(got))
	require.Equal(t, "0.5", SchemaValue(0.5))
	require.Equal(t, "1000000", SchemaValue(1e6))
}

// schemaAsGoValues is a schema written as Go maps, the style that
// tools.Schema replaced.
var schemaAsGoValues = regexp.MustCompile(`"(properties|items|type)":\s*map\[string\]any`)

// TestToolSchemasAreWrittenWithSchema keeps one way of declaring a tool's
// parameters: no Go file of the project builds a schema from maps.
func TestToolSchemasAreWrittenWithSchema(t *testing.T) {
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, loc := range schemaAsGoValues.FindAllIndex(src, -1) {
			found = append(found, fmt.Sprintf("%s:%d", path, 1+strings.Count(string(src[:loc[0]]), "\n")))
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "tool schemas written as Go maps; write them as JSON text with tools.Schema")
}
