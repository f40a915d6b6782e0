package round_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// surface is the exported top-level names of the package in dir (methods
// not counted) and the module packages its non-test files import.
func surface(t *testing.T, dir string) (names []string, imports map[string]bool) {
	t.Helper()
	imports = map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fs, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, "github.com/toolround/toolround/") {
				imports[strings.TrimPrefix(p, "github.com/toolround/toolround/")] = true
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names, imports
}

// TestThePublicContractStaysSmall: round is what a client or a tool author
// reads, so it stays under 200 exported names; the worker's own payloads go
// to internal/wire and the Temporal names to round/names. round imports
// only round/names and the leaf internal/text, and round/names only
// internal/text, so that a client pulls in neither the worker nor its
// dependencies.
func TestThePublicContractStaysSmall(t *testing.T) {
	names, imports := surface(t, ".")
	if len(names) >= 200 {
		t.Errorf("package round exports %d top-level names; the contract stays under 200 (move the worker's plumbing to internal/wire)", len(names))
	}
	for p := range imports {
		if p != "round/names" && p != "internal/text" {
			t.Errorf("package round imports %s; of the module it imports only round/names and internal/text (a leaf)", p)
		}
	}
	_, imports = surface(t, "names")
	for p := range imports {
		if p != "internal/text" {
			t.Errorf("package round/names imports %s; of the module it imports only the leaf internal/text", p)
		}
	}
}
