package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/tools"
)

// TestEveryBuiltInHasEveryPiece names, for each built-in, any piece of a
// tool that it lacks (docs/adding-a-tool.md): a description, a schema that
// compiles, a timeout, a kind of the round's table (workflows.Kinds; one that
// runs on the worker has a handler), a line in the requirements that names
// it, and an entry in client/catalog.json (go generate ./client). A new
// tool that forgot one fails here, with its name and what is missing.
func TestEveryBuiltInHasEveryPiece(t *testing.T) {
	reg := registry(t)
	var docs strings.Builder
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "requirements", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/requirements: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "client", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var catalog []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &catalog); err != nil {
		t.Fatal(err)
	}
	inCatalog := map[string]bool{}
	for _, c := range catalog {
		inCatalog[c.Name] = true
	}
	for _, d := range reg.Definitions() {
		var missing []string
		if strings.TrimSpace(d.Description) == "" {
			missing = append(missing, "a description (Definition.Description)")
		}
		if _, err := tools.CompileSchema(d.Parameters); err != nil {
			missing = append(missing, "a schema that compiles (Definition.Parameters: "+err.Error()+")")
		}
		if d.EffectiveTimeout() <= 0 {
			missing = append(missing, "a timeout (Definition.Timeout)")
		}
		if k := d.EffectiveKind(); !slices.Contains(workflows.Kinds(), k) {
			missing = append(missing, "a kind of the round's table (internal/workflows/kinds.go), not "+string(k))
		} else if k == tools.KindActivity && d.Handler == nil {
			missing = append(missing, "a handler, as a tool run on the worker needs (Definition.Handler)")
		}
		if !strings.Contains(docs.String(), "`"+d.Name+"`") {
			missing = append(missing, "a line in docs/requirements that names it (`"+d.Name+"`)")
		}
		if !inCatalog[d.Name] {
			missing = append(missing, "an entry in client/catalog.json (go generate ./client)")
		}
		if len(missing) > 0 {
			t.Errorf("built-in %s lacks %s", d.Name, strings.Join(missing, "; "))
		}
	}
}
