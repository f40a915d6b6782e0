package tests

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// TestMCPResourceLinksAreReadable runs the MCP everything server's
// get-resource-links tool through the real worker and starter, then reads
// the links it returned with the server's read_resource tool: a text
// resource and a blob resource, each through the server's resources/read,
// and a URI the server does not know is an error that names the server.
func TestMCPResourceLinksAreReadable(t *testing.T) {
	e, _ := everythingEnv(t)
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const links, reader = "mcp_ev_get-resource-links", "mcp_ev_read_resource"
	listed := e.starter(ctx, "", "tools", "--provider", "openai")
	require.Equal(t, 0, listed.code, listed.stderr)
	require.Contains(t, listed.stdout, `"`+reader+`"`, "a server with resources gets its read tool")

	roundOf := func(n int, calls ...round.ToolCall) round.Result {
		t.Helper()
		in := e.input(n, "claude-code", &round.RunState{Fetched: []string{links, reader}}, calls...)
		in.AutoApprove = true
		res := decodeResult(t, <-e.startRound(in))
		require.Len(t, res.Results, len(calls))
		return res
	}

	first := roundOf(1, call("l1", links, map[string]any{"count": 2}))
	got := first.Results[0]
	require.Equal(t, round.StatusOK, got.Status, got.Content)
	line := regexp.MustCompile(`\[resource link (\S+) Text Resource 2; read it with ` + reader + `\]`).FindStringSubmatch(got.Content)
	require.NotNil(t, line, "the link names the tool that reads it: %s", got.Content)
	textURI := line[1]
	line = regexp.MustCompile(`\[resource link (\S+) Blob Resource 1; read it with ` + reader + `\]`).FindStringSubmatch(got.Content)
	require.NotNil(t, line, got.Content)
	blobURI := line[1]

	second := roundOf(2,
		call("r1", reader, map[string]any{"uri": textURI}),
		call("r2", reader, map[string]any{"uri": blobURI}),
		call("r3", reader, map[string]any{"uri": "https://example.com/not-this-servers"}))
	require.Equal(t, round.StatusOK, second.Results[0].Status, second.Results[0].Content)
	require.Contains(t, second.Results[0].Content, "Resource 2: This is a plaintext resource")
	require.Equal(t, round.StatusOK, second.Results[1].Status, second.Results[1].Content)
	require.Contains(t, second.Results[1].Content, "Resource 1:", "the blob is text/plain and reads as text")
	require.Equal(t, round.StatusError, second.Results[2].Status)
	require.Contains(t, second.Results[2].Content, `mcp server "ev", read_resource https://example.com/not-this-servers`)
}

// TestMCPLongRunningToolReportsProgress runs the MCP everything server's
// trigger-long-running-operation through the real worker: while it runs,
// the server's progress notifications are the call's activity heartbeats
// (so Temporal shows how far it is), and the call completes.
func TestMCPLongRunningToolReportsProgress(t *testing.T) {
	e, _ := everythingEnv(t)
	e.startWorker()

	const long = "mcp_ev_trigger-long-running-operation"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{long}}, call("l1", long, map[string]any{"duration": 6, "steps": 6}))
	in.AutoApprove = true
	done := e.startRound(in)

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	var seen string
	require.Eventually(t, func() bool {
		d, err := tc.DescribeWorkflow(context.Background(), in.WorkflowID(), "")
		if err != nil {
			return false
		}
		for _, pa := range d.RawResponse.GetPendingActivities() {
			var details string
			if pa.GetHeartbeatDetails() == nil || converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &details) != nil {
				continue
			}
			if regexp.MustCompile(`^progress [1-5]/6$`).MatchString(details) {
				seen = details
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the server's progress reaches the activity's heartbeat")
	t.Logf("heartbeat while it ran: %q", seen)

	res := decodeResult(t, <-done)
	got := byID(res)["l1"]
	require.Equal(t, round.StatusOK, got.Status, got.Content)
	require.Contains(t, got.Content, "Long running operation completed. Duration: 6 seconds, Steps: 6.")
}

// TestMCPBinaryContentIsKept: the everything server's gzip-file-as-resource
// returns a gzip file as an embedded blob, which no format passes to a
// model: its line names the reference under which the worker kept its
// bytes in Redis, and those bytes are the file (item 4 of E).
func TestMCPBinaryContentIsKept(t *testing.T) {
	e, _ := everythingEnv(t)
	e.startWorker()
	const gz = "mcp_ev_gzip-file-as-resource"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{gz}},
		call("g1", gz, map[string]any{"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8sIHdvcmxk", "outputType": "resource"}))
	in.AutoApprove = true
	r := byID(decodeResult(t, <-e.startRound(in)))
	require.Equal(t, round.StatusOK, r["g1"].Status, r["g1"].Content)
	m := regexp.MustCompile(`\[resource \S+ application/gzip, (\d+) bytes; kept as (\S+)\]`).FindStringSubmatch(r["g1"].Content)
	require.NotNil(t, m, r["g1"].Content)

	rc, err := cache.Open(context.Background(), cache.Options{URL: testenv.RedisURL()})
	require.NoError(t, err)
	defer rc.Close()
	b64, err := rc.Blobs().Get(context.Background(), m[2])
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	require.Equal(t, m[1], strconv.Itoa(len(raw)))
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, "hello, world", string(plain))
}
