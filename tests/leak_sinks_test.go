package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// leakSinksRedisDB is the Redis database of the second leak hunt, apart
// from TestSecretsNeverLeave's.
const leakSinksRedisDB = 13

// TestSecretsNeverLeaveTheConsoleSpansOrLogs is the rest of T9's leak
// hunt: the worker exports trace spans to a receiver in the test and logs
// JSON; rounds that store secrets and use them in http_request against the
// echo server are submitted through the real console's API, one of them
// waiting for an approval in the inbox; an agent run whose model stores a
// secret and then sends it with {{secret:NAME}} runs beside them. Every
// span, JSON log line, console answer, the console's event stream and log,
// the model's requests, the agent's status and history and every key of
// the worker's Redis database are read: no encoding of any value may be in
// any of them.
func TestSecretsNeverLeaveTheConsoleSpansOrLogs(t *testing.T) {
	values := hardSecrets("AGENT", `ag"ent<&>-s3crét/+=`)
	consoleNames := []string{"MARKUP", "QUOTE", "UNICODE"}

	redisURL := leakRedisURL(t, leakSinksRedisDB)
	rdb := leakRedis(t, redisURL)

	recv, otel := newOTLPReceiver(t)
	echo := newEchoServerAndOther(t)
	model := newSecretModel(t, values["AGENT"], echo.srv.URL)

	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	e := newEnv(t, append(append(model.env(), otel...), "TOOLROUND_SECRET_KEY="+secrets.EncodeKey(key), "REDIS_URL="+redisURL,
		"LOG_FORMAT=json", "LOG_LEVEL=debug")...)
	w := e.startWorker()
	c := e.startConsole()
	stream := c.rawStream(t, e.session)

	sinks := map[string]string{}
	var ids []string
	api := func(what, method, path, token string, body any) apiReply {
		t.Helper()
		r := c.call(t, method, path, token, body)
		sinks[fmt.Sprintf("console %s %s (%s)", method, path, what)] = string(r.body)
		return r
	}

	// Round 1 through the console: store the secrets, as an agent token may.
	// The schema wants "value" in lower case, so the VALUE call is refused;
	// its arguments are in history all the same.
	state := &round.RunState{Fetched: []string{"http_request", "store_secret"}}
	var calls []round.ToolCall
	for _, n := range consoleNames {
		calls = append(calls, call("s-"+n, "store_secret", map[string]any{"name": n, "value": values[n]}))
	}
	calls = append(calls, call("case-QUOTE", "store_secret", `{"name":"QUOTE","VALUE":`+jsonString(t, values["QUOTE"])+`}`))
	in := e.input(1, "claude-code", state, calls...)
	r := api("store", "POST", "/api/v1/rounds?wait=1", c.agent, in)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var res round.Result
	r.json(t, &res)
	requireEveryCallOnce(t, in, res)
	for _, cr := range res.Results {
		if strings.HasPrefix(cr.CallID, "s-") {
			require.Equal(t, round.StatusOK, cr.Status, "%s: %s", cr.CallID, cr.Content)
			require.NotContains(t, cr.Content, "unsealed", "the console sealed %s", cr.CallID)
		}
	}
	ids = append(ids, in.WorkflowID())
	state = res.State

	// Round 2: use them in headers, queries, user info, bodies, an error
	// and a redirect to another host; an approver may auto-approve.
	host := strings.TrimPrefix(echo.srv.URL, "http://")
	calls = nil
	for _, n := range consoleNames {
		ph := "{{secret:" + n + "}}"
		calls = append(calls,
			call("hdr-"+n, "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all", "headers": map[string]string{"X-Token": ph}}),
			call("query-"+n, "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all&k=" + ph}),
			call("user-"+n, "http_request", map[string]any{"url": "http://user:" + ph + "@" + host + "/echo?forms=all"}),
			call("body-"+n, "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all", "method": "POST", "body": `{"password":"` + ph + `"}`}),
			call("e500-"+n, "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all&status=500", "headers": map[string]string{"X-Token": ph}}),
			call("r307-"+n, "http_request", map[string]any{"url": echo.srv.URL + "/away", "method": "POST", "body": `{"password":"` + ph + `"}`}),
		)
	}
	in = e.input(2, "claude-code", state, calls...)
	in.AutoApprove = true
	r = api("use", "POST", "/api/v1/rounds", c.approver, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	// A call that sends a secret asks even with auto_approve (T5): a person
	// approves each through the API.
	require.Eventually(t, func() bool {
		c.approveAll(t, e.session)
		got := c.call(t, "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)
		return got.code == http.StatusOK && bytes.Contains(got.body, []byte(`"results"`))
	}, 120*time.Second, 200*time.Millisecond)
	r = api("use", "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	r.json(t, &res)
	requireEveryCallOnce(t, in, res)
	for _, cr := range res.Results {
		if strings.HasPrefix(cr.CallID, "hdr-") || strings.HasPrefix(cr.CallID, "body-") {
			require.Equal(t, round.StatusOK, cr.Status, "%s: %s", cr.CallID, cr.Content)
			require.Contains(t, cr.Content, "[secret:", cr.CallID)
		}
	}
	require.Zero(t, echo.otherHits.Load(), "a body with a secret never reached the other host")
	ids = append(ids, in.WorkflowID())
	api("finished", "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)

	// Round 3 waits for a person (a POST asks): the inbox and the round
	// show the call.
	in = e.input(3, "claude-code", &round.RunState{Fetched: []string{"http_request"}},
		call("wait-QUOTE", "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all", "method": "POST",
			"headers": map[string]string{"X-Token": "{{secret:QUOTE}}"}, "body": `{"password":"{{secret:UNICODE}}"}`}))
	r = api("start", "POST", "/api/v1/rounds", c.agent, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	ids = append(ids, in.WorkflowID())
	p := c.pendingOf(t, in.WorkflowID(), "wait-QUOTE")
	c.waitInbox(t, e.session, 1)
	api("waiting", "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)
	api("session", "GET", "/api/v1/inbox?session="+e.session, c.agent, nil)
	api("all", "GET", "/api/v1/inbox", c.approver, nil)
	approvalID, _ := p["approval_id"].(string)
	r = api("approve", "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": in.WorkflowID(), "call_id": "wait-QUOTE", "approval_id": approvalID, "approve": true})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = c.resultOf(t, in.WorkflowID())
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	api("approved", "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)

	// An agent run: its model stores AGENT, then sends it with a
	// placeholder; tool-call arguments stream in pieces.
	const agentRun = "agent-1"
	wid := names.AgentWorkflowID(e.session, agentRun)
	// Its call that sends the secret asks even with auto_approve (T5): a
	// person approves it through the API while the run waits.
	done := e.startAgent("--session", e.session, "--run", agentRun, "--auto-approve", "--events", "call the service")
	out := approveUntil(t, c, e.session, done, 150*time.Second, 250*time.Millisecond)
	require.Equal(t, 0, out.code, out.stderr)
	require.Equal(t, "done\n", out.stdout)
	require.Len(t, model.requests(), 4, "the model was called four times")
	status := e.starter(context.Background(), "", "agent-status", wid)
	require.Equal(t, 0, status.code, status.stderr)
	require.Contains(t, status.stdout, "[secret:AGENT]", "the echo server's answer reached the model redacted")
	sinks["starter agent output"] = out.stdout + out.stderr
	sinks["starter agent-status"] = status.stdout + status.stderr
	require.Contains(t, out.stderr, round.EventModelToken)
	ids = append(ids, wid)
	for n := 1; n <= 3; n++ {
		ids = append(ids, names.WorkflowID(e.session, agentRun, n))
	}
	for i, req := range model.requests() {
		sinks[fmt.Sprintf("model request %d", i)] = string(req.Body)
	}

	// The console's event stream has every round's end and the run's.
	require.Eventually(t, func() bool {
		s := stream.String()
		return strings.Count(s, round.EventRoundFinished) >= 6 && strings.Contains(s, round.EventAgentFinished)
	}, 30*time.Second, 50*time.Millisecond, "the events arrived through the stream")
	require.Contains(t, stream.String(), round.EventModelToken, "the run's events are in the session's stream")
	sinks["console event stream"] = stream.String()
	sinks["console log"] = c.logs.String()

	// Spans: a tool span for each call of the rounds, the run's rounds
	// included, and the SDK's spans around them.
	// The run's workflow span ends last.
	var toolSpans, runs int
	require.Eventually(t, func() bool {
		toolSpans = len(recv.named("tool http_request")) + len(recv.named("tool store_secret"))
		runs = len(recv.named("RunWorkflow:" + names.WorkflowName))
		return toolSpans >= 4+len(consoleNames)*6+1+2 && runs >= 6 && len(recv.named("RunWorkflow:"+names.AgentWorkflowName)) > 0
	}, 30*time.Second, 50*time.Millisecond, "spans received: %d of tools, %d of rounds", toolSpans, runs)
	recv.mu.Lock()
	spans := append([]*tracepb.Span(nil), recv.spans...)
	recv.mu.Unlock()
	for i, s := range spans {
		sinks[fmt.Sprintf("span %d %s", i, s.GetName())] = spanText(t, s)
	}

	// The JSON log: every line is JSON; the strings in it are read decoded
	// as well as raw.
	logText := w.logs.String()
	lines := strings.Split(strings.TrimSpace(logText), "\n")
	require.Greater(t, len(lines), 10)
	var decoded strings.Builder
	for _, line := range lines {
		var v any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "LOG_FORMAT=json: %s", line)
		fmt.Fprintln(&decoded, v)
	}
	sinks["worker JSON log"] = logText
	sinks["worker JSON log, decoded"] = decoded.String()

	dump := e.storedSinks(sinks, ids, rdb)
	require.Contains(t, dump, cache.EventsKey(e.session), "the event stream is in the dump")
	t.Logf("read %d sinks: %d spans, %d log lines, %d Redis keys", len(sinks), len(spans), len(lines), len(dump))
	requireNoSecretIn(t, sinks, values)
}

// requireNoSecretIn fails when a sink holds any encoding of any value, or
// anything the redactor would redact, and names every such sink.
func requireNoSecretIn(t *testing.T, sinks, values map[string]string) {
	t.Helper()
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	keys := make([]string, 0, len(sinks))
	for k := range sinks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	red := secrets.NewRedactor(values)
	checks := 0
	defer func() { t.Logf("leak cases held: %d (a sink, a secret, an encoding of it)", checks) }()
	for _, sink := range keys {
		text := sinks[sink]
		var leaked []string
		for _, n := range names {
			for form, enc := range secretstest.Encodings(values[n]) {
				checks++
				if strings.Contains(text, enc) {
					leaked = append(leaked, form+" of "+n)
				}
			}
		}
		if len(leaked) > 0 || red.Contains(text) {
			sort.Strings(leaked)
			t.Errorf("%s holds a secret (%s): %s", sink, strings.Join(leaked, ", "), clip(red.Redact(text), text))
		}
	}
}

// spanText is everything a span carries: its name, status, attributes and
// events with theirs, as plain strings, and its protobuf JSON.
func spanText(t *testing.T, s *tracepb.Span) string {
	var b strings.Builder
	var value func(v *commonpb.AnyValue)
	value = func(v *commonpb.AnyValue) {
		switch {
		case v.GetArrayValue() != nil:
			for _, x := range v.GetArrayValue().GetValues() {
				value(x)
			}
		case v.GetKvlistValue() != nil:
			for _, kv := range v.GetKvlistValue().GetValues() {
				b.WriteString(kv.GetKey() + "=")
				value(kv.GetValue())
			}
		case v.GetBytesValue() != nil:
			b.Write(v.GetBytesValue())
		default:
			b.WriteString(v.GetStringValue())
		}
		b.WriteString("\n")
	}
	attrs := func(kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			b.WriteString(kv.GetKey() + "=")
			value(kv.GetValue())
		}
	}
	b.WriteString(s.GetName() + "\n" + s.GetStatus().GetMessage() + "\n")
	attrs(s.GetAttributes())
	for _, ev := range s.GetEvents() {
		b.WriteString(ev.GetName() + "\n")
		attrs(ev.GetAttributes())
	}
	for _, l := range s.GetLinks() {
		attrs(l.GetAttributes())
	}
	j, err := protojson.Marshal(s)
	require.NoError(t, err)
	b.Write(j)
	return b.String()
}

// rawStream reads a session's event stream from the console, as sent, in
// the background until the test ends.
func (c *consoleProc) rawStream(t *testing.T, session string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", c.url+"/api/v1/sessions/"+session+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.agent)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	buf := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		_, _ = io.Copy(buf, resp.Body)
	}()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), ": ready") }, 10*time.Second, 20*time.Millisecond,
		"the event stream did not get ready")
	return buf
}

// newSecretModel is the model of the leak hunt's agent run, on the chat
// completions API: it loads store_secret and http_request, stores a secret
// through run_tool, then sends it to the echo server with a placeholder,
// then answers "done". Tool-call arguments stream in two pieces, the
// stored value's cut inside the value.
func newSecretModel(t *testing.T, secret, echoURL string) *modelServer {
	return newModelServer(t, func(r scripted.Request) (scripted.Turn, error) {
		var c scripted.Call
		switch step(r) {
		case 1:
			c = modelFindTools("call_find", "store_secret,http_request")
		case 2:
			c = modelRunTool("call_store", "store_secret", map[string]any{"name": "AGENT", "value": secret})
		case 3:
			c = modelRunTool("call_use", "http_request", map[string]any{
				"url": echoURL + "/echo?forms=all", "headers": map[string]string{"X-Token": "{{secret:AGENT}}"}})
		default:
			return scripted.Turn{Text: "done"}, nil
		}
		return scripted.Turn{Calls: []scripted.Call{c}}, nil
	}, scripted.Options{Split: true})
}

// payloadData is a payload's data as the Temporal CLI prints it: base64.
var payloadData = regexp.MustCompile(`"data":\s*"([A-Za-z0-9+/=]*)"`)

// withPayloads is the CLI's JSON output with every payload's data decoded
// after it: a value is found in a payload whatever its offset in it.
func withPayloads(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(out)
	for _, m := range payloadData.FindAllStringSubmatch(out, -1) {
		plain, err := base64.StdEncoding.DecodeString(m[1])
		require.NoError(t, err, m[1])
		b.WriteString("\n")
		b.Write(plain)
	}
	return b.String()
}

// The webhooks of waits (N1) are a sink too: secrets are stored, then
// calls whose arguments send them (header, query, body) wait, are approved
// and send waiting and decided webhooks; no body or header a receiver gets
// holds any encoding of a value (T9).
func TestSecretsNeverLeaveTheWebhooksT9(t *testing.T) {
	values := map[string]string{
		"QUOTE":  `q"uo\te'd-s3cret`,
		"MARKUP": `<tag a="1">&amp;'x'</tag>`,
	}
	h := newHookReceiver(t, "hook-secret-t9")
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+secrets.EncodeKey(key), "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-t9")
	e.startWorker()
	echo := newEchoServer(t)

	var outputs []string
	state := &round.RunState{Fetched: []string{"http_request", "store_secret", "run_command"}}
	run := func(n int, calls ...round.ToolCall) round.Result {
		t.Helper()
		in := e.input(n, "claude-code", state, calls...)
		r := e.approveAll(in.WorkflowID(), e.startRound(in), &outputs)
		res := decodeResult(t, r)
		state = res.State
		return res
	}
	res := run(1,
		call("s-quote", "store_secret", map[string]any{"name": "QUOTE", "value": values["QUOTE"]}),
		call("s-markup", "store_secret", map[string]any{"name": "MARKUP", "value": values["MARKUP"]}))
	for _, id := range []string{"s-quote", "s-markup"} {
		require.Equal(t, round.StatusOK, byID(res)[id].Status, byID(res)[id].Content)
	}
	res = run(2,
		call("send-quote", "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all", "headers": map[string]string{"X-Token": "{{secret:QUOTE}}"}}),
		call("send-markup", "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all&k={{secret:MARKUP}}"}),
		call("send-body", "http_request", map[string]any{"url": echo.srv.URL + "/echo?forms=all", "method": "POST", "body": "{{secret:QUOTE}} and {{secret:MARKUP}}"}))
	for _, id := range []string{"send-quote", "send-markup", "send-body"} {
		require.Equal(t, round.StatusOK, byID(res)[id].Status, byID(res)[id].Content)
	}
	// A model that writes a stored value out in plain text in another
	// call's arguments: the command waits, and its webhooks' summary must
	// not carry the value either.
	res = run(3, call("echo-plain", "run_command", map[string]any{"command": "true " + values["QUOTE"]}))
	require.NotEmpty(t, byID(res)["echo-plain"].Status)

	// The calls of rounds 2 and 3 send secrets or run a command, so each
	// waited for a decision and was approved: every wait has its waiting
	// and decided webhook.
	require.Eventually(t, func() bool {
		tools := map[string]bool{}
		waits, decided := 0, 0
		for _, k := range h.keys() {
			p, _ := h.payload(k)
			switch p.Type {
			case notify.TypeWaiting:
				waits++
				tools[p.Tool] = true
			case notify.TypeDecided:
				decided++
			}
		}
		return waits == 4 && decided == 4 && tools["http_request"] && tools["run_command"]
	}, 30*time.Second, 50*time.Millisecond, "keys: %v", h.keys())

	sinks := map[string]string{}
	h.mu.Lock()
	for i, b := range h.raw {
		sinks[fmt.Sprintf("webhook body %d", i)] = b
	}
	for i, hd := range h.headers {
		sinks[fmt.Sprintf("webhook headers %d", i)] = hd
	}
	h.mu.Unlock()
	t.Logf("read %d webhook bodies and headers", len(sinks))
	requireNoSecretIn(t, sinks, values)
}
