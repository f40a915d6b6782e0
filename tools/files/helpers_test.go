package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// env is a workdir with the file tools registered on it.
type env struct {
	t    *testing.T
	dir  string
	wd   *tools.Workdir
	defs map[string]tools.Definition
}

// fakeClock advances one second per reading, so version times are distinct
// and predictable.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	wd, err := tools.OpenWorkdir(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)}
	cfg := Config{Workdir: wd, Now: clock.now}
	if mod != nil {
		mod(&cfg)
	}
	defs, err := Definitions(cfg)
	require.NoError(t, err)
	e := &env{t: t, dir: wd.Dir(), wd: wd, defs: map[string]tools.Definition{}}
	for _, d := range defs {
		e.defs[d.Name] = d
	}
	return e
}

// call validates args against the tool's schema, as the engine does, then
// runs the handler.
func (e *env) call(name string, args any) (tools.Result, error) {
	e.t.Helper()
	raw := rawArgs(e.t, args)
	d, ok := e.defs[name]
	require.True(e.t, ok, "tool %s", name)
	require.Empty(e.t, tools.Validate(d.Parameters, raw), "test arguments must pass the schema of %s", name)
	return e.callRaw(name, raw)
}

// callRaw runs the handler on arguments that were not validated.
func (e *env) callRaw(name string, raw json.RawMessage) (tools.Result, error) {
	e.t.Helper()
	return e.defs[name].Handler(context.Background(), tools.Request{CallID: "c1", Args: raw})
}

func (e *env) ok(name string, args any) tools.Result {
	e.t.Helper()
	res, err := e.call(name, args)
	require.NoError(e.t, err)
	return res
}

func (e *env) fail(name string, args any) error {
	e.t.Helper()
	_, err := e.call(name, args)
	require.Error(e.t, err)
	return err
}

func rawArgs(t *testing.T, args any) json.RawMessage {
	t.Helper()
	switch a := args.(type) {
	case string:
		return json.RawMessage(a)
	case json.RawMessage:
		return a
	}
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return b
}

func (e *env) abs(rel string) string { return filepath.Join(e.dir, filepath.FromSlash(rel)) }

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := e.abs(rel)
	require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(e.t, os.WriteFile(p, []byte(content), 0o644))
}

func (e *env) content(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.abs(rel))
	require.NoError(e.t, err)
	return string(b)
}

func (e *env) missing(rel string) {
	e.t.Helper()
	_, err := os.Lstat(e.abs(rel))
	require.ErrorIs(e.t, err, os.ErrNotExist, "%s should not exist", rel)
}

// walkAll calls fn with every path under dir, hidden ones included.
func walkAll(dir string, fn func(string)) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fn(p)
		return nil
	})
}

type m = map[string]any
