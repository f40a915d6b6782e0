package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/seam"
	"github.com/toolround/toolround/tools"
)

// crashed is what a checkpoint panics with to stop an attempt at a point,
// as a killed process would: the deferred lock release stands for the
// kernel's.
type crashed struct{}

// attempt runs one attempt of a file tool under an operation id, stopping at
// the checkpoint stopAt ("" runs it whole).
func (e *env) attempt(name, opID string, gen int, args string, stopAt string) (res tools.Result, err error, died bool) {
	e.t.Helper()
	ctx := seam.WithCheckpoint(context.Background(), func(p string) {
		if p == stopAt {
			panic(crashed{})
		}
	})
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(crashed); !ok {
				panic(p)
			}
			died = true
		}
	}()
	res, err = e.defs[name].Handler(ctx, tools.Request{Tool: name, CallID: "c1", OperationID: opID, Generation: gen, Args: json.RawMessage(args)})
	return res, err, false
}

func (e *env) reconcile(name, opID string) tools.Reconciliation {
	e.t.Helper()
	r, err := e.defs[name].Reconcile(context.Background(), tools.Request{Tool: name, CallID: "c1", OperationID: opID})
	require.NoError(e.t, err)
	return r
}

func TestReconcileFileTools(t *testing.T) {
	cases := []struct {
		tool, args, seed string // seed: a.txt's content first; "-" for none
		stopAt           string
		want             tools.Verdict
		after            string // a.txt's content at the end; "-" for none
	}{
		{"edit_file", `{"path":"a.txt","new_text":"new"}`, "old", "edit_file:before_write", tools.VerdictAbsent, "new"},
		{"edit_file", `{"path":"a.txt","new_text":"new"}`, "old", "edit_file:after_write", tools.VerdictApplied, "new"},
		{"edit_file", `{"path":"a.txt","old_text":"n=1","new_text":"n=1+"}`, "n=1", "edit_file:after_write", tools.VerdictApplied, "n=1+"},
		{"remove_file", `{"path":"a.txt"}`, "old", "remove_file:before_write", tools.VerdictAbsent, "-"},
		{"remove_file", `{"path":"a.txt"}`, "old", "remove_file:after_write", tools.VerdictApplied, "-"},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.stopAt, func(t *testing.T) {
			e := newEnv(t, nil)
			p := filepath.Join(e.dir, "a.txt")
			if c.seed != "-" {
				require.NoError(t, os.WriteFile(p, []byte(c.seed), 0o644))
			}
			op := "wf/run/c1"
			_, _, died := e.attempt(c.tool, op, 0, c.args, c.stopAt)
			require.True(t, died)
			r := e.reconcile(c.tool, op)
			require.Equal(t, c.want, r.Verdict, r.Content)
			if r.Verdict == tools.VerdictAbsent {
				// The lost attempt, had it lived, may not act now; the run
				// the verdict allows does, once.
				_, err, _ := e.attempt(c.tool, op, 0, c.args, "")
				require.ErrorContains(t, err, "handed operation")
				_, err, _ = e.attempt(c.tool, op, 1, c.args, "")
				require.NoError(t, err)
			} else {
				require.Contains(t, r.Content, "took effect")
			}
			got, err := os.ReadFile(p)
			if c.after == "-" {
				require.ErrorIs(t, err, os.ErrNotExist)
			} else {
				require.NoError(t, err)
				require.Equal(t, c.after, string(got))
			}
		})
	}
}

// A lock still held is no proof of death: the outcome stays unknown, and
// so does a file that changed in another way.
func TestReconcileUnknownWhileLockHeldOrFileChanged(t *testing.T) {
	e := newEnv(t, nil)
	op := "wf/run/c1"
	l, err := lockOp(e.wd.Root(), op)
	require.NoError(t, err)
	require.Equal(t, tools.VerdictUnknown, e.reconcile("edit_file", op).Verdict)
	_, err, _ = e.attempt("edit_file", op, 0, `{"path":"a.txt","new_text":"x"}`, "")
	require.ErrorContains(t, err, "holds its lock")
	l.release()

	_, _, died := e.attempt("edit_file", op, 0, `{"path":"a.txt","new_text":"x"}`, "edit_file:before_write")
	require.True(t, died)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("someone else"), 0o644))
	r := e.reconcile("edit_file", op)
	require.Equal(t, tools.VerdictUnknown, r.Verdict)
	require.Contains(t, r.Content, "matches neither")
}
