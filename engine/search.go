package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round/names"
)

// SearchAttribute is a search attribute that rounds keep current (T7).
type SearchAttribute struct {
	Name string
	// Type is the CLI's name of its type: Keyword, Bool, Int.
	Type string
	kind enumspb.IndexedValueType
}

// SearchAttributes are the attributes the namespace must have: a round that
// upserts one the namespace lacks has its workflow task failed until it is
// added, so the worker checks them before it polls.
var SearchAttributes = []SearchAttribute{
	{names.SearchSession, "Keyword", enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{names.SearchWaiting, "Bool", enumspb.INDEXED_VALUE_TYPE_BOOL},
	{names.SearchWaitingCalls, "Int", enumspb.INDEXED_VALUE_TYPE_INT},
	{names.SearchParent, "Keyword", enumspb.INDEXED_VALUE_TYPE_KEYWORD},
}

// ErrSearchAttributes is matched by CheckSearchAttributes's error for a
// namespace without them.
var ErrSearchAttributes = errors.New("missing search attributes")

// checkSearchAttributes refuses a namespace without SearchAttributes. A
// server that does not let the worker list them (no permission, not
// implemented) is not refused: the worker says so and starts.
func (e *Engine) checkSearchAttributes(ctx context.Context, c client.Client) error {
	ns := e.Config.Namespace
	if ns == "" {
		ns = "default"
	}
	err := CheckSearchAttributes(ctx, c, ns, e.Config.TemporalAddress)
	var denied *serviceerror.PermissionDenied
	var unimpl *serviceerror.Unimplemented
	if errors.As(err, &denied) || errors.As(err, &unimpl) {
		e.Logger.Warn("cannot check the namespace's search attributes; without them rounds fail their workflow tasks",
			"namespace", ns, "need", "ToolroundSession (Keyword), ToolroundWaiting (Bool), ToolroundWaitingCalls (Int), ToolroundParent (Keyword)", "error", err)
		return nil
	}
	return err
}

// CheckSearchAttributes returns an error, one line with the command that
// adds them, when the namespace lacks one of SearchAttributes or has it with
// another type (it matches ErrSearchAttributes), or when the server does not
// list them.
func CheckSearchAttributes(ctx context.Context, c client.Client, namespace, address string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list the search attributes of namespace %s: %w", namespace, err)
	}
	have := resp.GetCustomAttributes()
	var missing []string
	byType := map[string][]string{}
	var types []string
	for _, a := range SearchAttributes {
		got, found := have[a.Name]
		switch {
		case !found:
			missing = append(missing, a.Name+" ("+a.Type+")")
		case got != a.kind:
			missing = append(missing, fmt.Sprintf("%s (%s, not %s: remove it first with temporal operator search-attribute remove --name %s)", a.Name, a.Type, typeName(got), a.Name))
		default:
			continue
		}
		if _, seen := byType[a.Type]; !seen {
			types = append(types, a.Type)
		}
		byType[a.Type] = append(byType[a.Type], a.Name)
	}
	if len(missing) == 0 {
		return nil
	}
	var cmds []string
	for _, typ := range types {
		cmd := fmt.Sprintf("temporal operator search-attribute create --address %s --namespace %s", address, namespace)
		for _, name := range byType[typ] {
			cmd += " --name " + name
		}
		cmds = append(cmds, cmd+" --type "+typ)
	}
	return fmt.Errorf("%w: namespace %s lacks %s, which rounds and subagents keep for the inbox; add them with: %s",
		ErrSearchAttributes, namespace, strings.Join(missing, ", "), strings.Join(cmds, " && "))
}

// typeName is the CLI's name of an indexed value type.
func typeName(t enumspb.IndexedValueType) string {
	s := strings.TrimPrefix(t.String(), "INDEXED_VALUE_TYPE_")
	if s == "" {
		return "unknown"
	}
	return s[:1] + strings.ToLower(s[1:])
}
