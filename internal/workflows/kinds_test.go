package workflows

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func kindTestDef(name string, d tools.Definition) tools.Definition {
	d.Name, d.Description, d.Parameters = name, "x", json.RawMessage(`{"type":"object"}`)
	d.Handler = func(context.Context, tools.Request) (tools.Result, error) { return tools.Result{}, nil }
	return d
}

// TestKindsAreOneTable: the round's table names each kind once, the last
// (the worker's activity) taking every call; a definition and the
// snapshot the catalog records of it name the same kind; a definition
// whose facts name two kinds is refused (docs/adding-a-tool.md).
func TestKindsAreOneTable(t *testing.T) {
	kinds := Kinds()
	seen := map[tools.Kind]bool{}
	for _, k := range kinds {
		require.False(t, seen[k], "kind %s has two lines", k)
		seen[k] = true
	}
	require.Equal(t, tools.KindActivity, kinds[len(kinds)-1])

	c := &RegistryCatalog{}
	for _, tc := range []struct {
		d    tools.Definition
		want tools.Kind
	}{
		{tools.Definition{Name: "ask", Interactive: true}, tools.KindWait},
		{tools.Definition{Name: "sub", Kind: tools.KindChildRun}, tools.KindChildRun},
		{tools.Definition{Name: "bot", Kind: tools.KindChatbot}, tools.KindChatbot},
		{tools.Definition{Name: "mine", Remote: &tools.Remote{Queue: "q"}}, tools.KindToolWorker},
		{tools.Definition{Name: "plain"}, tools.KindActivity},
		{tools.Definition{Name: "mcp_x", Source: tools.SourceMCP}, tools.KindActivity},
	} {
		require.Equal(t, tc.want, tc.d.EffectiveKind(), tc.d.Name)
		ti := c.info(&tc.d)
		require.Equal(t, tc.want, ti.Kind, "%s: the snapshot records its kind", tc.d.Name)
		require.Equal(t, tc.want, ti.kind(), tc.d.Name)
	}

	reg := tools.NewRegistry()
	for _, d := range []tools.Definition{
		{Interactive: true, Kind: tools.KindChildRun},
		{Interactive: true, Remote: &tools.Remote{Queue: "q"}},
		{Kind: tools.KindChatbot, Remote: &tools.Remote{Queue: "q"}},
	} {
		err := reg.Register(kindTestDef("both", d))
		require.ErrorContains(t, err, "more than one kind")
	}
	require.NoError(t, reg.Register(kindTestDef("ask", tools.Definition{Interactive: true, Kind: tools.KindWait})), "a kind its facts agree with")
}

// TestSnapshotRecordsKind: a new snapshot names each tool's kind, and the
// facts a build from before ToolInfo.Kind reads it by; a snapshot recorded
// before ToolInfo.Kind still reads as the kind it ran.
func TestSnapshotRecordsKind(t *testing.T) {
	reg := tools.NewRegistry()
	require.NoError(t, reg.Register(kindTestDef("sub", tools.Definition{Kind: tools.KindChildRun})))
	require.NoError(t, reg.Register(kindTestDef("bot", tools.Definition{Kind: tools.KindChatbot})))
	c := NewCatalog(reg, CatalogOptions{})
	s := c.Snapshot(SnapshotRequest{Calls: []Unwrapped{{Name: "sub", Args: `{}`}, {Name: "bot", Args: `{"name":"x","message":"hi"}`}, {Name: "calculate", Args: `{}`}}})
	for name, want := range map[string][]string{
		"sub": {`"kind":"child_run"`, `"subagent":true`},
		"bot": {`"kind":"chatbot"`, `"chatbot":true`},
	} {
		b, err := json.Marshal(s.Tools[name])
		require.NoError(t, err)
		for _, w := range want {
			require.Contains(t, string(b), w, name)
		}
	}
	for name, ti := range s.Tools {
		older := ti
		older.Kind = "" // what a build from before Kind reads of it
		require.Equal(t, ti.Kind, older.pastKind(), name)
	}

	for raw, want := range map[string]tools.Kind{
		`{"name":"sub","subagent":true}`:                   tools.KindChildRun,
		`{"name":"bot","chatbot":true}`:                    tools.KindChatbot,
		`{"name":"ask","interactive":true}`:                tools.KindWait,
		`{"name":"mine","client":true}`:                    tools.KindWait,
		`{"name":"remote","remote":{"queue":"q"}}`:         tools.KindToolWorker,
		`{"name":"plain"}`:                                 tools.KindActivity,
		`{"name":"sub","kind":"chatbot","subagent":false}`: tools.KindChatbot,
	} {
		var ti ToolInfo
		require.NoError(t, json.Unmarshal([]byte(raw), &ti))
		require.Equal(t, want, ti.kind(), raw)
	}
}

// TestToolOfAKindNoLineRunsIsMissing: a registered tool whose kind the
// round's table lacks is a tool this worker does not have (P1.5), never a
// call run some other way.
func TestToolOfAKindNoLineRunsIsMissing(t *testing.T) {
	reg := tools.NewRegistry()
	require.NoError(t, reg.Register(kindTestDef("teleport", tools.Definition{Kind: "teleport"})))
	s := NewCatalog(reg, CatalogOptions{}).Snapshot(SnapshotRequest{Calls: []Unwrapped{{Name: "teleport", Args: `{}`}}})
	require.NotContains(t, s.Tools, "teleport")
	require.Contains(t, s.Missing["teleport"], `kind "teleport"`)
}
