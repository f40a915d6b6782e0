package usertools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/toolworker"
)

func TestParseQueuesY2(t *testing.T) {
	qs, err := ParseQueues(" orders:trusted, mail ,,")
	require.NoError(t, err)
	require.Equal(t, []Queue{{Name: "orders", Trusted: true}, {Name: "mail"}}, qs)
	qs, err = ParseQueues("")
	require.NoError(t, err)
	require.Empty(t, qs)
	for _, bad := range []string{"orders:trust", "a,a", ":trusted", "a b", "a/b"} {
		_, err := ParseQueues(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "TOOL_QUEUES", bad)
	}
}

// A queue's tools replace what it announced before; a name another tool
// has is refused with the reason, and never shadows it (Y2).
func TestSyncRegistersAndRefusesY2(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "read_file", SideEffect: tools.ReadOnly, Handler: func(_ context.Context, r tools.Request) (tools.Result, error) { return tools.Result{}, nil }})
	decl := func(name string, effect toolworker.Effect) toolworker.Decl {
		return toolworker.Decl{Name: name, Effect: effect, Parameters: json.RawMessage(`{"type":"object"}`), Subject: "id"}
	}
	a := Queue{Name: "a", Trusted: true}
	refused := reg.SetQueue("a", []tools.Definition{Definition(decl("lookup", toolworker.EffectReadOnly), a), Definition(decl("read_file", toolworker.EffectReadOnly), a)})
	require.Equal(t, map[string]string{"read_file": "the name is taken by a tool of the worker (app)"}, refused)
	d, ok := reg.Lookup("lookup")
	require.True(t, ok)
	require.Equal(t, tools.SourceUser, d.Source)
	require.Equal(t, tools.ReadOnly, d.SideEffect)
	require.Equal(t, "a", d.Remote.Queue)
	require.True(t, d.Remote.Trusted)
	require.Equal(t, "A-1", d.Subject(json.RawMessage(`{"id":"A-1"}`)))

	refused = reg.SetQueue("b", []tools.Definition{Definition(decl("lookup", toolworker.EffectSideEffect), Queue{Name: "b"})})
	require.Equal(t, map[string]string{"lookup": "the name is taken by a tool of queue a"}, refused)

	reg.SetQueue("a", nil) // its tool worker announced nothing
	_, ok = reg.Lookup("lookup")
	require.False(t, ok)
	require.Empty(t, reg.SetQueue("b", []tools.Definition{Definition(decl("lookup", toolworker.EffectSideEffect), Queue{Name: "b"})}))
	d, _ = reg.Lookup("lookup")
	require.Equal(t, tools.AtMostOnce, d.SideEffect)

	s := &Sync{Registry: reg, Queues: []Queue{a}}
	require.Contains(t, s.Refuse("c", "x"), "add it to TOOL_QUEUES")
	require.Equal(t, "the name is taken by a tool of queue b", s.Refuse("a", "lookup"))
	require.Equal(t, "", s.Refuse("a", "fresh"))
}
