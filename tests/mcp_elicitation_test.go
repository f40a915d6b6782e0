package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// elicitEnv is a worker whose MCP server "desk" (tools/mcp/internal/
// elicitserver) asks the user for input during its calls; bookings is the
// file its book tool appends to.
func elicitEnv(t *testing.T, extra ...string) (e *env, bookings string) {
	t.Helper()
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "elicitserver", "elicitserver")
	bookings = filepath.Join(dir, "bookings")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"desk": map[string]any{"command": server, "env": map[string]string{"BOOK_LOG": bookings}}})
	return newEnv(t, append([]string{"MCP_CONFIG=" + mcpConfig}, extra...)...), bookings
}

// bookingsOf reads the lines the book tool wrote.
func bookingsOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestMCPElicitationThroughTheWorker: a call whose MCP server asks for
// input waits as kind elicitation with a wait_id, listed by pending and
// the inbox with the server, its message and the requested schema (a url
// request with its URL and host); an answer for a call that does not wait
// is refused; `starter answer --json` with content
// that fails the schema is refused and changes nothing, a valid answer
// reaches the server (the schema's default fills what it leaves out), a
// second answer finds nothing waiting, and --cancel answers a url request
// (SPEC E1).
func TestMCPElicitationThroughTheWorker(t *testing.T) {
	e, bookings := elicitEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_desk_book", "mcp_desk_visit"}},
		call("b1", "mcp_desk_book", map[string]any{"what": "dinner"}),
		call("v1", "mcp_desk_visit", map[string]any{}))
	in.AutoApprove = true
	done := e.startRound(in)
	wfID := in.WorkflowID()

	// The server's calls change things, so they run one after the other.
	book := e.waitPending(wfID, "b1")[0]
	require.Equal(t, round.KindElicitation, book.Kind)
	require.NotEmpty(t, book.WaitID)
	require.NotNil(t, book.Elicitation)
	require.Equal(t, "desk", book.Elicitation.Server)
	require.Equal(t, "form", book.Elicitation.Mode)
	require.Equal(t, "When should dinner be booked, and for how many?", book.Elicitation.Message)
	require.Contains(t, string(book.Elicitation.RequestedSchema), `"date"`)

	inbox := e.starter(context.Background(), "", "inbox", "--session", e.session, "--json")
	require.Equal(t, 0, inbox.code, inbox.stderr)
	require.Contains(t, inbox.stdout, `"kind": "elicitation"`)

	bad := e.starter(context.Background(), "", "answer", wfID, "b1", "--json", `{"seats":0}`)
	require.NotEqual(t, 0, bad.code, "content without the required date is refused")
	require.Contains(t, bad.stderr, "content fails the requested schema: (root): date is required; seats: Must be greater than or equal to 1")
	require.Empty(t, bookingsOf(t, bookings), "a refused answer reaches nobody")

	stale := e.starter(context.Background(), "", "answer", wfID, "v1", "--cancel")
	require.NotEqual(t, 0, stale.code, "v1 does not wait yet")
	e.mustStarter("answer", wfID, "b1", "--json", `{"date":"2026-12-24"}`)

	visit := e.waitPending(wfID, "v1")[0]
	require.Equal(t, round.KindElicitation, visit.Kind)
	require.NotNil(t, visit.Elicitation)
	require.Equal(t, "url", visit.Elicitation.Mode)
	require.Equal(t, "https://forms.example.com/sign?id=42", visit.Elicitation.URL)
	require.Equal(t, "forms.example.com", visit.Elicitation.Host)
	e.mustStarter("answer", wfID, "v1", "--cancel")
	res := decodeResult(t, <-done)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["b1"].Status, r["b1"].Content)
	require.Equal(t, "booked dinner on 2026-12-24 for 2", r["b1"].Content)
	require.Equal(t, round.StatusOK, r["v1"].Status, r["v1"].Content)
	require.Equal(t, "visit: cancel", r["v1"].Content)
	require.Equal(t, []string{"dinner 2026-12-24 2"}, bookingsOf(t, bookings))

	again := e.starter(context.Background(), "", "answer", wfID, "b1", "--decline")
	require.NotEqual(t, 0, again.code, "an answered call waits for nothing: %s", again.stdout)
}

// TestMCPElicitationDeadlineCancels: an unanswered request is cancelled at
// the round's confirm timeout, and the call ends with what the server then
// says; nothing is booked (SPEC E1).
func TestMCPElicitationDeadlineCancels(t *testing.T) {
	e, bookings := elicitEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_desk_book"}},
		call("b1", "mcp_desk_book", map[string]any{"what": "lunch"}))
	in.AutoApprove = true
	in.ConfirmTimeoutSeconds = 2
	r := byID(e.round(in))
	require.Equal(t, round.StatusOK, r["b1"].Status, r["b1"].Content)
	require.Equal(t, "not booked: the user chose cancel", r["b1"].Content)
	require.Empty(t, bookingsOf(t, bookings))
}

// TestMCPElicitationSurvivesAWorkerKill: a 2026-07-28 server asks for
// input with an input_required result, which sits in history; the worker
// dies while the call waits (its stdio server with it), and once a new
// worker runs, the person's answer runs the call again with the answer and
// the server's requestState, which completes it: booked once (SPEC E1).
func TestMCPElicitationSurvivesAWorkerKill(t *testing.T) {
	e, bookings := elicitEnv(t)
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_desk_book"}},
		call("b1", "mcp_desk_book", map[string]any{"what": "a flight"}))
	in.AutoApprove = true
	done := e.startRound(in)
	wfID := in.WorkflowID()
	p := e.waitPending(wfID, "b1")[0]
	require.Equal(t, round.KindElicitation, p.Kind)
	w.kill(t)
	e.startWorker()
	e.mustStarter("answer", wfID, "b1", "--json", `{"date":"2027-05-01","seats":1}`)
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusOK, r["b1"].Status, r["b1"].Content)
	require.Equal(t, "booked a flight on 2027-05-01 for 1", r["b1"].Content)
	require.Equal(t, []string{"a flight 2027-05-01 1"}, bookingsOf(t, bookings))
}

// TestMCPElicitationOlderProtocolLostWithTheWorker: an older server's
// elicitation/create waits inside the call's activity, which heartbeats;
// the worker dies while it waits (the server with it), so the call, which
// has side effects, ends unknown_outcome once the heartbeat timeout
// notices, and is not run again (SPEC E1, P2.4).
func TestMCPElicitationOlderProtocolLostWithTheWorker(t *testing.T) {
	e, _ := everythingEnv(t)
	w := e.startWorker()
	tool := "mcp_ev_trigger-elicitation-request"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{tool}}, call("f1", tool, map[string]any{}))
	in.AutoApprove = true
	done := e.startRound(in)
	p := e.waitPending(in.WorkflowID(), "f1")[0]
	require.Equal(t, round.KindElicitation, p.Kind)
	w.kill(t)
	e.startWorker()
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusUnknownOutcome, r["f1"].Status, r["f1"].Content)
}

// TestMCPElicitationFromTheEverythingServer: the MCP reference server's
// trigger-elicitation-request (an elicitation/create during the call, on
// its protocol) waits in the round with its whole schema, and a person's
// answer, checked against that schema, reaches the server, whose result
// quotes it; trigger-url-elicitation's URL is shown with its host (E1).
func TestMCPElicitationFromTheEverythingServer(t *testing.T) {
	e, _ := everythingEnv(t)
	e.startWorker()
	form, link := "mcp_ev_trigger-elicitation-request", "mcp_ev_trigger-url-elicitation"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{form, link}},
		call("f1", form, map[string]any{}),
		call("u1", link, map[string]any{"url": "https://auth.example.org/consent?x=1", "message": "Please consent"}))
	in.AutoApprove = true
	done := e.startRound(in)
	wfID := in.WorkflowID()

	p := e.waitPending(wfID, "f1")[0]
	require.Equal(t, round.KindElicitation, p.Kind)
	require.Equal(t, "ev", p.Elicitation.Server)
	require.Equal(t, "Please provide inputs for the following fields:", p.Elicitation.Message)
	for _, field := range []string{`"name"`, `"email"`, `"untitledMultipleSelectEnum"`, `"titledSingleSelectEnum"`} {
		require.Contains(t, string(p.Elicitation.RequestedSchema), field)
	}
	bad := e.starter(context.Background(), "", "answer", wfID, "f1", "--json", `{"name":"Ada","integer":500}`)
	require.NotEqual(t, 0, bad.code, "500 is above the schema's maximum")
	require.Contains(t, bad.stderr, "integer")
	e.mustStarter("answer", wfID, "f1", "--json", `{"name":"Ada Lovelace","check":true,"email":"ada@example.org","integer":7}`)

	u := e.waitPending(wfID, "u1")[0]
	require.Equal(t, "url", u.Elicitation.Mode)
	require.Equal(t, "https://auth.example.org/consent?x=1", u.Elicitation.URL)
	require.Equal(t, "auth.example.org", u.Elicitation.Host)
	e.mustStarter("answer", wfID, "u1", "--decline")

	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusOK, r["f1"].Status, r["f1"].Content)
	require.Contains(t, r["f1"].Content, "User provided the requested information")
	require.Contains(t, r["f1"].Content, "Ada Lovelace")
	require.Contains(t, r["f1"].Content, "ada@example.org")
	require.Contains(t, r["u1"].Content, "decline", r["u1"].Content)
}
