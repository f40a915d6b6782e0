package workflows_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// disk is a workdir the look tool reads: contents, and a state per file
// that changes with each write, as read_files records it.
type disk struct {
	mu      sync.Mutex
	files   map[string]string
	version map[string]int64
	reads   int
	checks  int
}

func (d *disk) write(p, content string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.files[p] = content
	d.version[p]++
}

func (d *disk) state(p string) tools.FileState {
	return tools.FileState{Size: int64(len(d.files[p])), ModTime: d.version[p]}
}

// diskTool reads files of d and records their states, as read_files does.
func diskTool(d *disk) tools.Definition {
	return tools.Definition{
		Name: "look", Description: "Read files of the fake disk.", Concurrent: true, SideEffect: tools.ReadOnly,
		Parameters: json.RawMessage(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}},"required":["paths"]}`),
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			var a struct{ Paths []string }
			if err := req.Decode(&a); err != nil {
				return tools.Result{}, err
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			d.reads++
			res := tools.Result{Files: map[string]tools.FileState{}, Read: a.Paths}
			for _, p := range a.Paths {
				res.Content += p + ": " + d.files[p] + "\n"
				res.Files[p] = d.state(p)
			}
			return res, nil
		},
		Changed: func(_ context.Context, files map[string]tools.FileState) []string {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.checks++
			var out []string
			for p, s := range files {
				if d.state(p) != s {
					out = append(out, p)
				}
			}
			return out
		},
	}
}

func lookRound(n int, st *round.RunState, calls ...round.ToolCall) round.Input {
	in := input(calls...)
	in.Round, in.State = n, st
	in.State.Fetched = append(in.State.Fetched, "look", "calculate")
	return in
}

// TestRepeatedReadIsCheckedAndNamesItsRound is U3 through the workflow: a
// repeated read whose files have not changed is served and its message
// names round 1; after the file changed outside the agent, the same call
// runs, returns the new content and replaces the entry.
func TestRepeatedReadIsCheckedAndNamesItsRound(t *testing.T) {
	d := &disk{files: map[string]string{}, version: map[string]int64{}}
	d.write("a.txt", "hello")
	args := `{"paths":["a.txt"]}`
	run := func(n int, st *round.RunState) round.Result {
		h := newHarness(t, 3)
		h.reg.MustRegister(diskTool(d))
		return h.run(t, lookRound(n, st, call("l1", "look", args), call("c1", "calculate", `{"expression":"1+1"}`)))
	}

	r1 := run(1, &round.RunState{})
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(r1))
	require.Equal(t, 1, d.reads)
	entry := r1.State.Dedupe[tools.DedupeKey("look", []byte(args))]
	require.Equal(t, map[string]round.FileState{"a.txt": {Size: 5, ModTime: 1}}, entry.Files)
	require.Equal(t, 0, d.checks, "a round without repeats checks nothing")

	r2 := run(2, r1.State)
	require.Equal(t, []round.Status{round.StatusDeduped, round.StatusDeduped}, statuses(r2))
	require.Equal(t, 1, d.reads, "the repeat did not run")
	require.Equal(t, 1, d.checks, "the repeat's files were checked before it was served")
	require.Equal(t, "[look] (repeats the result of round 1 of this run; the files it read have not changed since)\na.txt: hello\n", r2.Messages[0].Content)
	require.Equal(t, "[calculate] (repeats the result of round 1 of this run)\n= 1+1", r2.Messages[1].Content)
	require.Equal(t, &round.Repeat{Round: 1, CallID: "l1", Checked: true}, r2.Results[0].Repeat)

	d.write("a.txt", "changed outside")
	r3 := run(3, r2.State)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusDeduped}, statuses(r3))
	require.Equal(t, "[look] a.txt: changed outside\n", r3.Messages[0].Content)
	require.Equal(t, 2, d.reads)
	entry = r3.State.Dedupe[tools.DedupeKey("look", []byte(args))]
	require.Equal(t, 3, entry.Round, "the new result replaces the entry")
	require.Equal(t, int64(2), entry.Files["a.txt"].ModTime)

	r4 := run(4, r3.State)
	require.Equal(t, round.StatusDeduped, r4.Results[0].Status)
	require.Contains(t, r4.Messages[0].Content, "(repeats the result of round 3 of this run;")
}

// TestRepeatOfAToolThatCannotCheckRuns: an entry with file states whose
// tool cannot look at them again (gone from the worker, or without
// Changed) is not served; the call runs.
func TestRepeatOfAToolThatCannotCheckRuns(t *testing.T) {
	d := &disk{files: map[string]string{"a.txt": "hello"}, version: map[string]int64{"a.txt": 1}}
	args := `{"paths":["a.txt"]}`
	st := &round.RunState{Dedupe: map[string]round.DedupeEntry{tools.DedupeKey("look", []byte(args)): {
		Tool: "look", Content: "old", Round: 1, CallID: "l0", Files: map[string]round.FileState{"a.txt": {Size: 5, ModTime: 1}}}}}
	h := newHarness(t, 3)
	def := diskTool(d)
	def.Changed = nil
	h.reg.MustRegister(def)
	res := h.run(t, lookRound(2, st, call("l1", "look", args)))
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, 1, d.reads)
}

// TestDedupeFalseRunsEveryCall: with "dedupe": false, identical calls of
// the round and repeats of earlier rounds all run; the map is still updated.
func TestDedupeFalseRunsEveryCall(t *testing.T) {
	d := &disk{files: map[string]string{"a.txt": "hello"}, version: map[string]int64{"a.txt": 1}}
	args := `{"paths":["a.txt"]}`
	st := &round.RunState{Dedupe: map[string]round.DedupeEntry{tools.DedupeKey("look", []byte(args)): {
		Tool: "look", Content: "old", Round: 1, CallID: "l0", Files: map[string]round.FileState{"a.txt": {Size: 5, ModTime: 1}}}}}
	h := newHarness(t, 3)
	h.reg.MustRegister(diskTool(d))
	in := lookRound(2, st, call("l1", "look", args), call("l2", "look", args), call("c1", "calculate", `{"expression":"2"}`), call("c2", "calculate", `{"expression":"2"}`))
	off := false
	in.Dedupe = &off
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK, round.StatusOK, round.StatusOK}, statuses(res))
	require.Equal(t, 2, d.reads, "identical calls ran twice")
	require.Equal(t, 0, d.checks, "nothing is served, so nothing is checked")
	require.Equal(t, 1, h.rec.RunsOf("c1"))
	require.Equal(t, 1, h.rec.RunsOf("c2"), "the identical calculation ran too")
	require.Equal(t, 2, res.State.Dedupe[tools.DedupeKey("look", []byte(args))].Round, "the map is still updated")
}
