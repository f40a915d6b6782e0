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

// TestJSONSchemaEncodesAsJSONDoes: a configured value in a JSONSchema
// reads as json.Marshal writes it, keywords in sorted order, so a schema
// moved from JSON text to a JSONSchema keeps its bytes (the published
// catalog does not change).
func TestJSONSchemaEncodesAsJSONDoes(t *testing.T) {
	got := SchemaOf(&JSONSchema{Enum: []string{"a", "b"}, Maximum: Ptr(300.0), Description: "run by `sh -c`; \"quotes\" && pipes"})
	require.Equal(t, `{"description":"run by `+"`sh -c`"+`; \"quotes\" \u0026\u0026 pipes","enum":["a","b"],"maximum":300}`, string(got))
	require.Equal(t, `{"maximum":0.5}`, string(SchemaOf(&JSONSchema{Maximum: Ptr(0.5)})))
	require.Equal(t, `{"maximum":1000000}`, string(SchemaOf(&JSONSchema{Maximum: Ptr(1e6)})))
	require.Equal(t, `{"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"minimum":0,"type":"integer"}},"required":["a"],"type":"object"}`,
		string(SchemaOf(Object(map[string]*JSONSchema{"b": {Minimum: Ptr(0.0), Type: "integer"}, "a": {Type: "string"}}, "a"))))
}

// schemaAsGoValues is a schema written as untyped Go maps, the style that
// tools.Schema and tools.JSONSchema replaced.
var schemaAsGoValues = regexp.MustCompile(`"(properties|items|type)":\s*map\[string\]any`)

// TestToolSchemasAreWrittenWithSchema keeps schemas written as JSON text
// (tools.Schema) or built as a tools.JSONSchema: no Go file of the project
// builds a schema from untyped maps.
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
	require.Empty(t, found, "tool schemas written as Go maps; write them as JSON text with tools.Schema, or build a tools.JSONSchema")
}
