package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"
)

// TestBaselineIsClosed pins the list of changes that changeBaseline1 stands
// for. Executions recorded with its marker replay with exactly these
// versions; a change added to the list later would make them replay with
// behaviour they never had. A new change gets a marker of its own, or a new
// baseline.
func TestBaselineIsClosed(t *testing.T) {
	require.Equal(t, map[string]workflow.Version{
		"inbox-search-attributes": 1,
		"waiting-since-memo":      1,
		"approvals-t1-t5":         1,
		"honest-repeats":          1,
		"operation-ids":           1,
		"key-limits":              1,
		"reconcile-lost-attempts": 1,
		"reconcile-lost-again":    1,
	}, baseline1)
	require.Equal(t, "baseline-2026-11-30", changeBaseline1)
}

// TestLaterBaselinesAreClosed pins each later baseline the same way: the
// one before it and the changes after that.
func TestLaterBaselinesAreClosed(t *testing.T) {
	for _, b := range []struct {
		id          string
		got, before map[string]workflow.Version
		added       map[string]workflow.Version
	}{
		{changeBaseline2, baseline2, baseline1, map[string]workflow.Version{"call-finished": 1, "helpful-hints": 1}},
		{changeBaseline3, baseline3, baseline2, map[string]workflow.Version{"run-limits": 1, "live-decisions": 1}},
		{changeBaseline4, baseline4, baseline3, map[string]workflow.Version{"lean-output": 1, "build-memo": 1}},
	} {
		want := map[string]workflow.Version{}
		for k, v := range b.before {
			want[k] = v
		}
		for k, v := range b.added {
			want[k] = v
		}
		require.Equal(t, want, b.got, b.id)
	}
	require.Equal(t, "baseline-2026-12-01", changeBaseline2)
	require.Equal(t, "baseline-2026-12-02", changeBaseline3)
	require.Equal(t, "baseline-2026-12-02b", changeBaseline4)
}

// TestChangeIDsAreInOneTable: every change id the workflows ask for
// (Version, workflow.GetVersion), here and in the packages of the other
// workflows, is a name of the table in versions.go, each name there is
// change<Name> (Change<Name> when another workflow's package asks it), and
// no two name the same id.
func TestChangeIDsAreInOneTable(t *testing.T) {
	fset := token.NewFileSet()
	table := map[string]string{} // name -> id
	ids := map[string]string{}   // id -> name
	f, err := parser.ParseFile(fset, "versions.go", nil, 0)
	require.NoError(t, err)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, n := range v.Names {
				require.True(t, strings.HasPrefix(strings.ToLower(n.Name), "change"), "%s: the change ids are named change<Name>", n.Name)
				lit, ok := v.Values[i].(*ast.BasicLit)
				require.True(t, ok, "%s: a change id is a string literal", n.Name)
				id, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				require.NotContains(t, ids, id, "%s and %s name the same change id", n.Name, ids[id])
				table[n.Name], ids[id] = id, n.Name
			}
		}
	}
	asked := 0
	for _, name := range workflowFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				if fun.Name != "Version" {
					return true
				}
			case *ast.SelectorExpr:
				x, ok := fun.X.(*ast.Ident)
				if !ok || !(x.Name == "workflow" && fun.Sel.Name == "GetVersion" || x.Name == "workflows" && fun.Sel.Name == "Version") {
					return true
				}
			default:
				return true
			}
			var id string
			switch a := call.Args[1].(type) {
			case *ast.Ident:
				id = a.Name
			case *ast.SelectorExpr: // workflows.Change<Name>
				id = a.Sel.Name
			}
			if id == "change" && name == "versions.go" {
				return true // Version passes on what it was asked
			}
			require.True(t, table[id] != "", "%s: a change id not of the table in versions.go", fset.Position(call.Pos()))
			asked++
			return true
		})
	}
	require.NotZero(t, asked)
}

// workflowFiles are the workflow code's files: this package's and its
// subpackages', without tests.
func workflowFiles(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"*.go", "*/*.go"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	require.Contains(t, files, filepath.Join("agentrun", "run.go"))
	return files
}

// TestEveryVersionGoesThroughTheTable: workflow code asks for a change's
// version only through Version (versions.go), so every change id is one
// line of the table and a baseline can fold it.
func TestEveryVersionGoesThroughTheTable(t *testing.T) {
	for _, f := range workflowFiles(t) {
		if f == "versions.go" {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "workflow.GetVersion(") {
				t.Errorf("%s:%d asks workflow.GetVersion directly: use Version (versions.go)", f, i+1)
			}
		}
	}
}
