package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFuncLines is the most lines a function of the workflow code (this
// package's and its subpackages') may take, from its func keyword to its
// closing brace (45 item 3): a longer one is split into steps with names
// of their own.
const maxFuncLines = 80

// TestNoFunctionOverMaxLines fails naming every function (or method) of
// the workflow code that is longer than maxFuncLines.
func TestNoFunctionOverMaxLines(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, name := range workflowFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			checked++
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long; at most %d: split it into named steps", name, start.Line, funcName(fd), n, maxFuncLines)
			}
		}
	}
	require.NotZero(t, checked, "no function was checked")
}

// funcName is a function's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
