package calc

import (
	"errors"
	"fmt"

	"github.com/expr-lang/expr/ast"
)

// patcher rewrites arithmetic into calls of checked functions (division
// and modulo by zero become errors, integer overflow moves to float64
// instead of wrapping around) and records constructs that are refused.
type patcher struct {
	err error
}

var checkedOps = map[string]string{
	"/":  "_div",
	"%":  "_mod",
	"+":  "_add",
	"-":  "_sub",
	"*":  "_mul",
	"**": "_pow",
	"^":  "_pow",
}

func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if n.Operator == "matches" {
			p.fail(errors.New("the matches operator is not available in calculate"))
			return
		}
		fn, ok := checkedOps[n.Operator]
		if !ok {
			return
		}
		ast.Patch(node, &ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: fn},
			Arguments: []ast.Node{n.Left, n.Right},
		})
	case *ast.BuiltinNode:
		// ast.Walk visits children first, so inner loops were seen already;
		// here it is enough to look inside this loop's bodies.
		for _, arg := range n.Arguments {
			body, ok := arg.(*ast.PredicateNode)
			if !ok {
				continue
			}
			inner := &loopFinder{}
			ast.Walk(&body.Node, inner)
			if inner.name != "" {
				p.fail(fmt.Errorf("%s inside %s: loops may not nest in calculate; use a range or a formula instead (sum(1..n), n*(n+1)/2)", inner.name, n.Name))
			}
		}
	}
}

func (p *patcher) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// loopFinder finds a builtin that takes a loop body (map, all, reduce, ...).
type loopFinder struct{ name string }

func (f *loopFinder) Visit(node *ast.Node) {
	if n, ok := (*node).(*ast.BuiltinNode); ok && f.name == "" {
		for _, arg := range n.Arguments {
			if _, ok := arg.(*ast.PredicateNode); ok {
				f.name = n.Name
				return
			}
		}
	}
}
