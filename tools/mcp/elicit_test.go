package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// elicitServer builds internal/elicitserver once per test binary.
var elicitServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "elicitserver")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "elicitserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/elicitserver").CombinedOutput(); err != nil {
		return "", &exec.Error{Name: string(out), Err: err}
	}
	return bin, nil
})

func connectElicit(t *testing.T, timeout time.Duration) (*tools.Registry, string) {
	t.Helper()
	bin, err := elicitServer()
	require.NoError(t, err)
	log := filepath.Join(t.TempDir(), "bookings")
	t.Setenv("BOOK_LOG", log)
	_, reg := connect(t, Config{CallTimeout: timeout, Servers: []ServerConfig{
		{Name: "desk", Command: bin, Env: map[string]string{"BOOK_LOG": log}},
	}})
	return reg, log
}

// callWith runs a tool with an Elicitor in its context.
func callWith(t *testing.T, reg *tools.Registry, name, args string, ask tools.Elicitor) (string, error) {
	t.Helper()
	def, ok := reg.Lookup(name)
	require.True(t, ok, "tool %s is not registered; have %v", name, reg.Names())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ask != nil {
		ctx = tools.WithElicitor(ctx, ask)
	}
	res, err := def.Handler(ctx, tools.Request{CallID: "c1", Args: json.RawMessage(args)})
	return res.Content, err
}

// TestElicitationReachesTheCallsElicitor: a server's request during a call
// reaches the Elicitor of that call with the server's name, message and
// schema; an accepted form gets the schema's defaults for what it leaves
// out, and declining books nothing.
func TestElicitationReachesTheCallsElicitor(t *testing.T) {
	reg, log := connectElicit(t, 10*time.Second)
	var asked []tools.Elicitation
	got, err := callWith(t, reg, "mcp_desk_book", `{"what":"dinner"}`, func(_ context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
		asked = append(asked, e)
		return tools.ElicitResult{Action: "accept", Content: map[string]any{"date": "2026-12-24"}}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "booked dinner on 2026-12-24 for 2", got)
	require.Len(t, asked, 1)
	require.Equal(t, "desk", asked[0].Server)
	require.Equal(t, "form", asked[0].Mode)
	require.Equal(t, "When should dinner be booked, and for how many?", asked[0].Message)
	require.Contains(t, string(asked[0].Schema), `"date"`)

	got, err = callWith(t, reg, "mcp_desk_book", `{"what":"lunch"}`, func(context.Context, tools.Elicitation) (tools.ElicitResult, error) {
		return tools.ElicitResult{Action: "decline"}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "not booked: the user chose decline", got)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "dinner 2026-12-24 2\n", string(b))
}

// TestElicitationURLModeIsPassedOn: a url request reaches the Elicitor with
// its URL and id, to be shown, not opened.
func TestElicitationURLModeIsPassedOn(t *testing.T) {
	reg, _ := connectElicit(t, 10*time.Second)
	var asked tools.Elicitation
	got, err := callWith(t, reg, "mcp_desk_visit", `{}`, func(_ context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
		asked = e
		return tools.ElicitResult{Action: "cancel"}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "visit: cancel", got)
	require.Equal(t, "url", asked.Mode)
	require.Equal(t, "https://forms.example.com/sign?id=42", asked.URL)
	require.Equal(t, "sign-42", asked.ElicitationID)
}

// TestElicitationWaitDoesNotCountAgainstTheTimeout: the call's timeout
// stops while a person is asked: a wait three times the timeout still ends
// with the tool's answer.
func TestElicitationWaitDoesNotCountAgainstTheTimeout(t *testing.T) {
	reg, _ := connectElicit(t, 500*time.Millisecond)
	got, err := callWith(t, reg, "mcp_desk_book", `{"what":"tea"}`, func(ctx context.Context, _ tools.Elicitation) (tools.ElicitResult, error) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
			return tools.ElicitResult{}, ctx.Err()
		}
		return tools.ElicitResult{Action: "accept", Content: map[string]any{"date": "2027-01-02", "seats": 4}}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "booked tea on 2027-01-02 for 4", got)
}

// TestElicitationWithoutAPersonIsAnError: where nobody can be asked (no
// Elicitor), the server is told so and the call fails naming the server.
func TestElicitationWithoutAPersonIsAnError(t *testing.T) {
	reg, log := connectElicit(t, 10*time.Second)
	_, err := callWith(t, reg, "mcp_desk_book", `{"what":"cake"}`, nil)
	require.ErrorContains(t, err, `mcp server "desk", tool "book"`)
	require.ErrorContains(t, err, "nobody can be asked")
	_, statErr := os.Stat(log)
	require.True(t, os.IsNotExist(statErr), "nothing was booked")
}
