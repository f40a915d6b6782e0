package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// keyMeter counts, outside the workflow, the calls in flight per key and
// the order in which they started.
type keyMeter struct {
	mu       sync.Mutex
	inFlight map[string]int
	peak     map[string]int
	all      int
	peakAll  int
	order    map[string][]string
}

func newKeyMeter() *keyMeter {
	return &keyMeter{inFlight: map[string]int{}, peak: map[string]int{}, order: map[string][]string{}}
}

func (m *keyMeter) handler(key func(json.RawMessage) string) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		k := key(req.Args)
		m.mu.Lock()
		m.inFlight[k]++
		m.all++
		m.peak[k] = max(m.peak[k], m.inFlight[k])
		m.peakAll = max(m.peakAll, m.all)
		m.order[k] = append(m.order[k], req.CallID)
		m.mu.Unlock()
		time.Sleep(30 * time.Millisecond) // long enough for calls to overlap
		m.mu.Lock()
		m.inFlight[k]--
		m.all--
		m.mu.Unlock()
		return tools.Text("done " + req.CallID), nil
	}
}

func (m *keyMeter) snapshot() (peak map[string]int, peakAll int, order map[string][]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	peak, order = map[string]int{}, map[string][]string{}
	for k, v := range m.peak {
		peak[k] = v
	}
	for k, v := range m.order {
		order[k] = append([]string(nil), v...)
	}
	return peak, m.peakAll, order
}

// registerKeyed adds a host-keyed read (limit 2) and a path-keyed write
// (limit 1) to the harness's registry.
func registerKeyed(h *harness, m *keyMeter) {
	obj := json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"path":{"type":"string"}},"additionalProperties":false}`)
	h.reg.MustRegister(
		tools.Definition{Name: "get_url", Description: "Read a URL.", Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 5 * time.Minute, Parameters: obj,
			ConcurrencyKey: tools.HostKey("url"), KeyLimit: 2, Handler: m.handler(tools.HostKey("url")),
			KeyLimitFor: func(key string) int {
				if key == "host:c.example" {
					return 3 // a per-host limit, above the tool's own
				}
				if key == "host:d.example" {
					return 1 // and one below it
				}
				return 0
			}},
		tools.Definition{Name: "put_file", Description: "Write a file.", Concurrent: true, SideEffect: tools.AtMostOnce, Parameters: obj,
			ConcurrencyKey: tools.PathKey("path"), KeyLimit: tools.PathKeyLimit, Handler: m.handler(tools.PathKey("path"))},
	)
}

func keyedInput(calls ...round.ToolCall) round.Input {
	in := auto(input(calls...))
	in.State.Fetched = append(in.State.Fetched, "get_url", "put_file")
	return in
}

// SPEC R: calls that share a key run at most the key's limit at a time, on
// top of the round's bound, and in call order within the key; other keys
// pass a full one.
func TestConcurrencyKeysLimitCallsPerKey(t *testing.T) {
	h := newHarness(t, 8)
	m := newKeyMeter()
	registerKeyed(h, m)
	var calls []round.ToolCall
	for i := 0; i < 6; i++ {
		calls = append(calls, call(fmt.Sprintf("a%d", i), "get_url", fmt.Sprintf(`{"url":"https://A.example/p%d"}`, i)))
	}
	for i := 0; i < 3; i++ {
		calls = append(calls, call(fmt.Sprintf("b%d", i), "get_url", fmt.Sprintf(`{"url":"https://b.example/p%d"}`, i)))
		calls = append(calls, call(fmt.Sprintf("f%d", i), "put_file", fmt.Sprintf(`{"path":"%s"}`, []string{"./out/x.txt", "out/x.txt", "out//x.txt"}[i])))
	}
	calls = append(calls, call("g0", "put_file", `{"path":"out/y.txt"}`))
	res := h.run(t, keyedInput(calls...))
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, r.Content)
	}
	peak, peakAll, order := m.snapshot()
	require.Equal(t, map[string]int{"host:a.example": 2, "host:b.example": 2, "path:out/x.txt": 1, "path:out/y.txt": 1}, peak)
	require.LessOrEqual(t, peakAll, 8)
	require.Greater(t, peakAll, 2, "calls of other keys pass a full key")
	require.Equal(t, []string{"f0", "f1", "f2"}, order["path:out/x.txt"], "call order within a key")
	require.Len(t, order["host:a.example"], 6)
}

// A key's own limit (per-host limits of the HTTP tools) wins over the
// tool's, above and below it, and is kept in the round's snapshot.
func TestPerKeyLimitOverridesTheToolsLimit(t *testing.T) {
	h := newHarness(t, 8)
	m := newKeyMeter()
	registerKeyed(h, m)
	var calls []round.ToolCall
	for i := 0; i < 5; i++ {
		calls = append(calls,
			call(fmt.Sprintf("c%d", i), "get_url", fmt.Sprintf(`{"url":"https://c.example/p%d"}`, i)),
			call(fmt.Sprintf("d%d", i), "get_url", fmt.Sprintf(`{"url":"https://d.example/p%d"}`, i)),
			call(fmt.Sprintf("e%d", i), "get_url", fmt.Sprintf(`{"url":"https://e.example/p%d"}`, i)))
	}
	res := h.run(t, keyedInput(calls...))
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, r.Content)
	}
	peak, _, _ := m.snapshot()
	require.Equal(t, map[string]int{"host:c.example": 3, "host:d.example": 1, "host:e.example": 2}, peak)
}

// Without keys, nothing changes: the round's bound alone applies.
func TestCallsWithoutKeysOnlyHaveTheBound(t *testing.T) {
	h := newHarness(t, 4)
	m := newKeyMeter()
	registerKeyed(h, m)
	var calls []round.ToolCall
	for i := 0; i < 8; i++ {
		calls = append(calls, call(fmt.Sprintf("n%d", i), "get_url", fmt.Sprintf(`{"url":"not a url %d"}`, i)))
	}
	h.run(t, keyedInput(calls...))
	peak, _, _ := m.snapshot()
	require.Equal(t, 4, peak[""])
}
