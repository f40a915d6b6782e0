package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/internal/preview"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
)

// TestConsoleCardPreviewsTheFileAnOverwriteReplacesT14: with two hosts
// (WORKSPACE_PLACEMENT=host), a waiting edit_file without old_text shows
// on its card and on the signed-link page the size and first 20 lines of
// the file it would replace, read from the workspace's host when the page
// is shown; no workflow history holds those lines.
func TestConsoleCardPreviewsTheFileAnOverwriteReplacesT14(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	e, a, b := placedPair(t, "NOTIFY_LINK_KEY="+base64.StdEncoding.EncodeToString(key))
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	c := e.startConsole()

	// Round 1 binds the workspace to a host and writes the file there.
	first := editRound(e, 1, "w1", "notes.txt", "", "seed\n")
	first.AutoApprove = true
	res := e.round(first)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	holds, _ := holder(t, a, b)
	// What the file holds now was never in any call: only the host has it.
	var body strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&body, "kept-on-disk line %d\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(holds.dir, "notes.txt"), []byte(body.String()), 0o644))

	in := editRound(e, 2, "e2", "notes.txt", "", "replacement\n")
	r := c.call(t, "POST", "/api/v1/rounds", c.agent, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	wfID := in.WorkflowID()
	approvalID, _ := c.pendingOf(t, wfID, "e2")["approval_id"].(string)

	page := c.page(t, c.approver, "/calls/"+wfID+"?call=e2")
	require.Contains(t, page, "The file as it is now")
	require.Contains(t, page, fmt.Sprintf("%d bytes", body.Len()))
	var want strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&want, "kept-on-disk line %d\n", i)
	}
	require.Contains(t, page, want.String())
	require.NotContains(t, page, "kept-on-disk line 21")
	require.Contains(t, page, "of more")

	// The signed-link page shows the same.
	tok := notify.MintLink(key, notify.Link{WorkflowID: wfID, CallID: "e2", Decision: notify.DecisionDeny, By: "alice",
		Expires: time.Now().Add(time.Hour).Unix(), Nonce: "preview-1"})
	resp, err := http.PostForm(c.url+"/link/call", url.Values{"token": {tok}})
	require.NoError(t, err)
	var v struct {
		Tool    string `json:"tool"`
		Preview *struct {
			Exists bool     `json:"exists"`
			Size   int      `json:"size"`
			Lines  []string `json:"lines"`
			More   bool     `json:"more"`
		} `json:"preview"`
	}
	require.NoError(t, jsonDecode(resp, &v))
	require.Equal(t, "edit_file", v.Tool)
	require.NotNil(t, v.Preview)
	require.True(t, v.Preview.Exists)
	require.Equal(t, body.Len(), v.Preview.Size)
	require.Len(t, v.Preview.Lines, 20)
	require.Equal(t, "kept-on-disk line 20", v.Preview.Lines[19])

	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e2", "approval_id": approvalID, "approve": false, "reason": "seen"})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	c.resultOf(t, wfID)

	// Neither round's history, nor any other workflow's of the session,
	// holds a line of the preview.
	for _, id := range []string{first.WorkflowID(), wfID} {
		it := tc.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		n := 0
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			raw, err := proto.Marshal(ev)
			require.NoError(t, err)
			require.False(t, bytes.Contains(raw, []byte("kept-on-disk")), "event %d of %s holds the preview", ev.GetEventId(), id)
			n++
		}
		require.Positive(t, n, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: "ToolroundSession = '" + e.session + "'"})
	require.NoError(t, err)
	for _, x := range list.GetExecutions() {
		id := x.GetExecution().GetWorkflowId()
		require.True(t, id == first.WorkflowID() || id == wfID, "a workflow of the session other than its rounds: %s", id)
	}
	// The workflows that read the previews hold only ciphertext while the
	// server keeps them (the console deletes each once answered; the
	// server removes it asynchronously).
	list, err = tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default",
		Query: "WorkflowType = '" + preview.WorkflowName + "' AND TaskQueue = '" + e.taskQueue + "'"})
	require.NoError(t, err)
	for _, x := range list.GetExecutions() {
		it := tc.GetWorkflowHistory(ctx, x.GetExecution().GetWorkflowId(), x.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				break // deleted meanwhile
			}
			require.NoError(t, err)
			raw, err := proto.Marshal(ev)
			require.NoError(t, err)
			require.False(t, bytes.Contains(raw, []byte("kept-on-disk")), "event %d of the preview workflow %s holds the file", ev.GetEventId(), x.GetExecution().GetWorkflowId())
		}
	}
}

func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b.String())
	}
	return json.Unmarshal(b.Bytes(), v)
}

// TestConsoleCardPreviewsFromTheTaskQueueT14: without placement the
// preview is read by a worker of TASK_QUEUE, whose workdir every worker
// shares, versioned (WORKER_DEPLOYMENT) or not; a key file shows only its
// size.
func TestConsoleCardPreviewsFromTheTaskQueueT14(t *testing.T) {
	t.Run("unversioned", func(t *testing.T) { previewFromTaskQueue(t) })
	t.Run("versioned", func(t *testing.T) {
		previewFromTaskQueue(t, "WORKER_DEPLOYMENT=preview-"+fmt.Sprint(time.Now().UnixNano()), "WORKER_BUILD_ID=b1")
	})
}

func previewFromTaskQueue(t *testing.T, extra ...string) {
	e := newEnv(t, extra...)
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	e.startWorker()
	c := e.startConsole()
	const plan, env = "# Plan\n\nstep one\n", "API_TOKEN=never-shown-value\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "plan.md"), []byte(plan), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, ".env"), []byte(env), 0o600))

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("p1", "edit_file", map[string]any{"path": "plan.md", "new_text": "# New plan\n"}),
		call("k1", "edit_file", map[string]any{"path": ".env", "new_text": "API_TOKEN=x\n"}))
	r := c.call(t, "POST", "/api/v1/rounds", c.agent, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	c.pendingOf(t, in.WorkflowID(), "p1")
	c.pendingOf(t, in.WorkflowID(), "k1")

	page := c.page(t, c.approver, "/calls/"+in.WorkflowID()+"?call=p1")
	require.Contains(t, page, fmt.Sprintf("%d bytes", len(plan)))
	require.Contains(t, page, "<pre class=\"preview\"># Plan\n\nstep one\n</pre>")
	page = c.page(t, c.approver, "/calls/"+in.WorkflowID()+"?call=k1")
	require.Contains(t, page, fmt.Sprintf("%d bytes · a key file: only its size is shown", len(env)))
	require.NotContains(t, page, "never-shown-value")
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]any{"workflow_id": in.WorkflowID()})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
}

// TestConsoleBrowserLinkShowsThePreviewT14: in Chromium, the signed-link
// page of a waiting edit_file without old_text shows the size and first
// lines of the file it would replace, as text, and so does the
// console's card.
func TestConsoleBrowserLinkShowsThePreviewT14(t *testing.T) {
	key := bytes.Repeat([]byte{5}, 32)
	e := newEnv(t, "NOTIFY_LINK_KEY="+base64.StdEncoding.EncodeToString(key))
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	ctx := browserCtx(t)
	e.startWorker()
	c := e.startConsole()
	const old = "<b>kept</b> line 1\nline 2\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "page.html"), []byte(old), 0o644))
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("p1", "edit_file", map[string]any{"path": "page.html", "new_text": "new\n"}))
	r := c.call(t, "POST", "/api/v1/rounds", c.agent, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	c.pendingOf(t, in.WorkflowID(), "p1")

	tok := notify.MintLink(key, notify.Link{WorkflowID: in.WorkflowID(), CallID: "p1", Decision: notify.DecisionDeny, By: "alice",
		Expires: time.Now().Add(time.Hour).Unix(), Nonce: "browser-preview"})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(c.url+"/link#"+tok), chromedp.WaitVisible(css("#link-confirm"))))
	poll(t, ctx, `!document.querySelector("#link-preview-d").hidden`)
	require.Equal(t, fmt.Sprintf("%d bytes · its first 2 lines, read now and kept nowhere", len(old)), text(t, ctx, "#link-preview-note"))
	require.Equal(t, strings.TrimSuffix(old, "\n"), text(t, ctx, "#link-preview"))
	require.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll("#link-call b").length`), "the preview is inert text")

	// The console's card, signed in as an approver, shows the same file.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), c.approver+kb.Enter),
		chromedp.WaitVisible(css("#inbox-summary")),
		chromedp.Navigate(c.url+"/calls/"+in.WorkflowID()+"?call=p1"),
		chromedp.WaitVisible(css(".card .preview-box")),
	))
	require.Equal(t, fmt.Sprintf("%d bytes · its first 2 lines, read now and kept nowhere", len(old)), text(t, ctx, ".card .preview-box .note"))
	require.Equal(t, strings.TrimSuffix(old, "\n"), strings.TrimSuffix(text(t, ctx, ".card pre.preview"), "\n"))
	require.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll(".card .preview-box b").length`), "the card's preview is inert text")
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]any{"workflow_id": in.WorkflowID()})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
}
