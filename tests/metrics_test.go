package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// metricFamilies reads the worker's /metrics and parses the Prometheus text format.
func metricFamilies(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sample finds the sample of a family whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := sample(fams, name, labels)
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func histogramCount(fams map[string]*dto.MetricFamily, name string, labels map[string]string) uint64 {
	m := sample(fams, name, labels)
	if m == nil {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}

// TestMetricsAfterKnownRounds runs the real worker with METRICS_ADDR and
// checks the values section M's metrics have after two rounds: one with two
// calculate calls, one with invalid arguments, a made-up tool and a denied
// edit_file, one that is approved. Every toolround_* family has a HELP text
// and no placeholder label; the worker's log has one INFO line per call at
// its end, and the SDK's own lines are not at INFO.
func TestMetricsAfterKnownRounds(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e := newEnv(t, "METRICS_ADDR="+addr)
	w := e.startWorker()

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("a1", "calculate", map[string]any{"expression": "1+2"}),
		call("a2", "calculate", map[string]any{"expression": "2*3"}),
		call("v1", "calculate", map[string]any{}),
		call("u1", "made_up_tool_"+e.session, map[string]any{}),
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	e.waitPending(wfID, "e1")
	mid := metricFamilies(t, addr)
	require.Equal(t, 1.0, counter(mid, "toolround_approvals_requested_total", map[string]string{"tool": "edit_file"}))
	require.Zero(t, counter(mid, "toolround_approvals_decided_total", nil), "waiting approvals are requested minus decided")
	d := e.starter(context.Background(), "", "deny", wfID, "e1", "--reason", "no")
	require.Equal(t, 0, d.code, d.stderr)
	res := decodeResult(t, <-done)
	st := map[string]round.Status{}
	for _, r := range res.Results {
		st[r.CallID] = r.Status
	}
	require.Equal(t, map[string]round.Status{"a1": round.StatusOK, "a2": round.StatusOK, "v1": round.StatusInvalid, "u1": round.StatusUnknown, "e1": round.StatusSkipped}, st)
	require.NotContains(t, byID(res)["v1"].Content, "next:", "P3.2: no hint for invalid arguments, the model fixes them")
	require.Contains(t, byID(res)["u1"].Content, "\nnext: ")

	in2 := e.input(2, "claude-code", &round.RunState{Fetched: allTools},
		call("e2", "edit_file", map[string]any{"path": "y.txt", "new_text": "y"}))
	done2 := e.startRound(in2)
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", in2.WorkflowID())
		return r.code == 0 && strings.Contains(r.stdout, `"e2"`)
	}, 30*time.Second, 100*time.Millisecond)
	a := e.starter(context.Background(), "", "approve", in2.WorkflowID(), "e2")
	require.Equal(t, 0, a.code, a.stderr)
	res2 := decodeResult(t, <-done2)
	require.Equal(t, round.StatusOK, res2.Results[0].Status, res2.Results[0].Content)

	// The counters are cumulative per worker; this worker ran only these
	// two rounds.
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = metricFamilies(t, addr)
		return counter(fams, "toolround_rounds_total", nil) > 0 && len(fams["toolround_rounds_total"].GetMetric()) == 2
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, 1.0, counter(fams, "toolround_rounds_total", map[string]string{"outcome": "partial"}))
	require.Equal(t, 1.0, counter(fams, "toolround_rounds_total", map[string]string{"outcome": "ok"}))
	require.Equal(t, 2.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "calculate", "status": "ok"}))
	require.Equal(t, 1.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "calculate", "status": "invalid"}))
	require.Equal(t, 1.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "unknown", "status": "unknown"}),
		"a made-up tool name folds into one label value")
	require.Equal(t, 1.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "edit_file", "status": "skipped"}))
	require.Equal(t, 1.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "edit_file", "status": "ok"}))
	for _, m := range fams["toolround_tool_calls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			require.NotContains(t, l.GetValue(), "made_up_tool", "label values come from the catalog")
		}
	}
	require.Equal(t, 2.0, counter(fams, "toolround_approvals_requested_total", map[string]string{"tool": "edit_file"}))
	require.Equal(t, 1.0, counter(fams, "toolround_approvals_decided_total", map[string]string{"tool": "edit_file", "decision": "denied"}))
	require.Equal(t, 1.0, counter(fams, "toolround_approvals_decided_total", map[string]string{"tool": "edit_file", "decision": "approved"}))
	require.Equal(t, uint64(2), histogramCount(fams, "toolround_approval_wait_seconds", nil))
	require.Equal(t, uint64(2), histogramCount(fams, "toolround_tool_duration_seconds", map[string]string{"tool": "calculate"}))
	require.Equal(t, uint64(1), histogramCount(fams, "toolround_tool_duration_seconds", map[string]string{"tool": "edit_file"}))
	require.Contains(t, fams, "toolround_redis_skipped_total")
	require.Zero(t, counter(fams, "toolround_redis_skipped_total", nil), "Redis answered throughout")

	require.Equal(t, 0.0, counter(fams, "toolround_cache_requests_total", map[string]string{"tool": "fetch_page", "result": "hit"}))

	// The SDK's own metrics, through its OpenTelemetry handler.
	require.Positive(t, counter(fams, "temporal_workflow_completed_total", map[string]string{"workflow_type": names.WorkflowName}))
	require.Positive(t, histogramCount(fams, "temporal_workflow_task_execution_latency_seconds", nil))

	// Buckets that fit what they measure: task latencies in milliseconds,
	// approval waits in minutes and hours.
	require.Contains(t, bounds(fams, "temporal_workflow_task_execution_latency_seconds"), 0.01)
	require.Contains(t, bounds(fams, "toolround_approval_wait_seconds"), 3600.0)

	requireDashboardMetricsExported(t, fams)
	requireHelpAndRealLabels(t, fams)

	for _, c := range []struct{ wf, call, tool, status string }{
		{wfID, "a1", "calculate", "ok"}, {wfID, "a2", "calculate", "ok"}, {wfID, "v1", "calculate", "invalid"},
		{wfID, "u1", "made_up_tool_" + e.session, "unknown"}, {wfID, "e1", "edit_file", "skipped"},
		{in2.WorkflowID(), "e2", "edit_file", "ok"},
	} {
		require.Equal(t, 1, callLines(w.logs.String(), c.wf, c.call, func(line string) bool {
			return containsAll(line, "level=INFO", "tool="+c.tool, "status="+c.status, "duration_ms=")
		}), "one INFO line for call %s at its end:\n%s", c.call, w.logs.String())
	}
	require.NotContains(t, w.logs.String(), `level=INFO msg="Started Worker"`, "the SDK's INFO lines are at DEBUG")
}

// requireHelpAndRealLabels fails on a toolround_* family without a HELP text
// or with a series that carries a placeholder label value.
func requireHelpAndRealLabels(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	n := 0
	for name, f := range fams {
		if !strings.HasPrefix(name, "toolround_") {
			continue
		}
		n++
		require.NotEmpty(t, strings.TrimSpace(f.GetHelp()), "%s has no HELP text", name)
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				switch strings.ToLower(l.GetValue()) {
				case "none", "", "<nil>", "null", "n/a":
					t.Fatalf("%s{%s=%q}: a placeholder label", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	require.GreaterOrEqual(t, n, 8, "the project's families are there")
}

// callLines counts the "call finished" lines of the worker log for a call of
// a round that match.
func callLines(log, workflowID, callID string, match func(string) bool) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "call finished") && (strings.Contains(line, "workflow_id="+workflowID+" ") || strings.Contains(line, `"workflow_id":"`+workflowID+`"`)) &&
			(strings.Contains(line, "call_id="+callID+" ") || strings.Contains(line, `"call_id":"`+callID+`"`)) && match(line) {
			n++
		}
	}
	return n
}

// gauge is the value of a gauge of the task queue, and whether the worker
// reported it.
func gauge(fams map[string]*dto.MetricFamily, name, taskQueue string) (float64, bool) {
	m := sample(fams, name, map[string]string{"task_queue": taskQueue})
	if m == nil {
		return 0, false
	}
	return m.GetGauge().GetValue(), true
}

// TestWaitingApprovalGauges: the real worker with METRICS_ADDR reports the
// rounds of its task queue that wait for a person, their waiting calls and
// how long the oldest has waited, from Temporal visibility: 0 before any
// round; 1 round with 2 calls, whose age counts from when the calls began
// to wait, not from when the round was started while no worker ran (at
// least as long as the test has seen them wait, shorter than since the
// worker that asked started); then 0 again once both calls are approved.
func TestWaitingApprovalGauges(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e := newEnv(t, "METRICS_ADDR="+addr)
	w := e.startWorker()
	const (
		rounds = "toolround_approvals_waiting_rounds"
		calls  = "toolround_approvals_waiting_calls"
		oldest = "toolround_approval_oldest_wait_seconds"
	)
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = metricFamilies(t, addr)
		_, ok := gauge(fams, rounds, e.taskQueue)
		return ok
	}, 20*time.Second, 200*time.Millisecond, "the worker reports the waiting rounds of its task queue")
	for _, name := range []string{rounds, calls, oldest} {
		v, ok := gauge(fams, name, e.taskQueue)
		require.True(t, ok, name)
		require.Zero(t, v, "%s before any round", name)
	}
	w.kill(t)

	// The round starts while no worker polls: its calls begin to wait
	// when the next worker runs its first workflow task.
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x"}),
		call("e2", "edit_file", map[string]any{"path": "y.txt", "new_text": "y"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	time.Sleep(3 * time.Second) // a gap between the round's start and its wait, not a wait for a condition
	workerStarted := time.Now()
	e.startWorker()
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", wfID)
		return r.code == 0 && strings.Contains(r.stdout, `"e1"`) && strings.Contains(r.stdout, `"e2"`)
	}, 30*time.Second, 100*time.Millisecond)
	asked := time.Now() // the calls waited at least from here

	// The listing is cached for up to 10 s and visibility lags; the age
	// grows with every scrape, so wait until it shows 3 s.
	var before, scraped time.Time
	var age float64
	require.Eventually(t, func() bool {
		before = time.Now()
		fams = metricFamilies(t, addr)
		scraped = time.Now()
		n, _ := gauge(fams, rounds, e.taskQueue)
		age, _ = gauge(fams, oldest, e.taskQueue)
		return n == 1 && age >= 3
	}, 40*time.Second, 200*time.Millisecond, "one waiting round with an age of 3 s")
	require.GreaterOrEqual(t, age, before.Sub(asked).Seconds(), "the age is at least the time the test saw the calls wait")
	require.Less(t, age, scraped.Sub(workerStarted).Seconds(), "the wait began after the worker started, 3 s after the round")
	n, _ := gauge(fams, calls, e.taskQueue)
	require.Equal(t, 2.0, n, "two calls wait")

	e.mustStarter("approve", wfID, "e1")
	e.mustStarter("approve", wfID, "e2")
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Equal(t, round.StatusOK, res.Results[1].Status, res.Results[1].Content)
	require.Eventually(t, func() bool {
		fams = metricFamilies(t, addr)
		r, _ := gauge(fams, rounds, e.taskQueue)
		c, _ := gauge(fams, calls, e.taskQueue)
		a, ok := gauge(fams, oldest, e.taskQueue)
		return ok && r == 0 && c == 0 && a == 0 && counter(fams, "toolround_rounds_total", nil) == 1
	}, 40*time.Second, 200*time.Millisecond, "no round waits once both calls are approved")
	// The dashboard's waiting-approval panel queries these gauges.
	requireDashboardMetricsExported(t, fams)
}

// bounds are a histogram's bucket upper bounds.
func bounds(fams map[string]*dto.MetricFamily, name string) []float64 {
	var out []float64
	if m := sample(fams, name, nil); m != nil {
		for _, b := range m.GetHistogram().GetBucket() {
			out = append(out, b.GetUpperBound())
		}
	}
	return out
}

// requireDashboardMetricsExported checks that every metric the Grafana
// dashboard's queries and the example alert rules name is one the worker
// exports.
func requireDashboardMetricsExported(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docker", "grafana", "dashboards", "toolround.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	names := regexp.MustCompile(`\b(?:toolround|temporal)_[0-9A-Za-z_]+`)
	checked := 0
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			found := names.FindAllString(tg.Expr, -1)
			require.NotEmpty(t, found, "%s: %s names no metric", p.Title, tg.Expr)
			for _, n := range found {
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suffix); ok && fams[b].GetType() == dto.MetricType_HISTOGRAM {
						base = b
					}
				}
				require.Contains(t, fams, base, "panel %q queries %s, which the worker does not export", p.Title, n)
				checked++
			}
		}
	}
	require.GreaterOrEqual(t, checked, 10)

	// The example alert rules too.
	rules, err := os.ReadFile(filepath.Join("..", "docker", "prometheus", "alerts.yml"))
	require.NoError(t, err)
	exprs := regexp.MustCompile(`(?m)^\s*expr:\s*(.+)$`).FindAllStringSubmatch(string(rules), -1)
	require.NotEmpty(t, exprs, "alerts.yml has no rule")
	for _, m := range exprs {
		found := names.FindAllString(m[1], -1)
		require.NotEmpty(t, found, "alert %s names no metric", m[1])
		for _, n := range found {
			require.Contains(t, fams, n, "alert rule %s queries %s, which the worker does not export", m[1], n)
		}
	}
}

// otlpReceiver is an OTLP/gRPC trace receiver that keeps the spans.
type otlpReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// newOTLPReceiver serves an otlpReceiver on loopback until the test ends;
// env is a worker's settings that export its spans there at once.
func newOTLPReceiver(t *testing.T) (recv *otlpReceiver, env []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	recv = &otlpReceiver{}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, recv)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return recv, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_BSP_SCHEDULE_DELAY=100"}
}

// named returns the spans received so far with that name.
func (r *otlpReceiver) named(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

func spanAttrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.GetAttributes() {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.GetKey()] = v.GetStringValue()
		default:
			m[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		}
	}
	return m
}

// TestTracesAndJSONLogsOfTheRealWorker starts the worker with the standard
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver in the test and
// LOG_FORMAT=json: a round of two calls gives one round span with its
// outcome and a tool span per call under the round's trace, and the
// worker's log is JSON.
func TestTracesAndJSONLogsOfTheRealWorker(t *testing.T) {
	recv, otel := newOTLPReceiver(t)
	e := newEnv(t, append(otel, "LOG_FORMAT=json")...)
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("a1", "calculate", map[string]any{"expression": "1+2"}),
		call("a2", "calculate", map[string]any{"expression": "2*3"}))
	res := e.round(in)
	require.Equal(t, round.StatusOK, res.Results[0].Status)

	var runs, calls []*tracepb.Span
	require.Eventually(t, func() bool {
		runs, calls = recv.named("RunWorkflow:"+names.WorkflowName), recv.named("tool calculate")
		return len(runs) == 1 && len(calls) == 2
	}, 20*time.Second, 50*time.Millisecond, "spans received: %d rounds, %d calls", len(runs), len(calls))
	ra := spanAttrs(runs[0])
	require.Equal(t, "ok", ra["toolround.outcome"])
	require.Equal(t, in.WorkflowID(), ra["toolround.workflow_id"])
	ids := map[string]bool{}
	for _, c := range calls {
		ca := spanAttrs(c)
		require.Equal(t, "calculate", ca["toolround.tool"])
		require.Equal(t, "ok", ca["toolround.status"])
		require.Equal(t, "1", ca["toolround.attempt"])
		ids[ca["toolround.call_id"]] = true
		require.Equal(t, runs[0].GetTraceId(), c.GetTraceId(), "a call's span is in its round's trace")
	}
	require.Equal(t, map[string]bool{"a1": true, "a2": true}, ids)

	for _, line := range strings.Split(strings.TrimSpace(w.logs.String()), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "LOG_FORMAT=json: %s", line)
		require.False(t, v["level"] == "INFO" && v["msg"] == "Started Worker", "the SDK's INFO lines are at DEBUG: %s", line)
	}
	for _, id := range []string{"a1", "a2"} {
		require.Equal(t, 1, callLines(w.logs.String(), in.WorkflowID(), id, func(line string) bool {
			return containsAll(line, `"level":"INFO"`, `"tool":"calculate"`, `"status":"ok"`, `"duration_ms":`)
		}), "one INFO line for call %s:\n%s", id, w.logs.String())
	}
}

// TestCacheRequestMetrics: a fetch_page that misses the result cache and the
// same page in another run, which hits it, are counted by tool and result.
func TestCacheRequestMetrics(t *testing.T) {
	srv := newWebServer(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e := newEnv(t, "METRICS_ADDR="+addr)
	e.startWorker()
	page := srv.URL + "/page-" + e.session
	rdb := testenv.Redis(t)
	t.Cleanup(func() { rdb.Del(context.Background(), tools.FetchPageCacheKey(page)) })
	for _, run := range []string{"run-1", "run-2"} {
		in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"fetch_page"}}, call("f1", "fetch_page", map[string]any{"url": page}))
		in.RunID = run
		res := e.round(in)
		require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	}
	require.EqualValues(t, 1, srv.pages.Load(), "the second fetch came from the cache")
	fams := metricFamilies(t, addr)
	require.Equal(t, 1.0, counter(fams, "toolround_cache_requests_total", map[string]string{"tool": "fetch_page", "result": "miss"}))
	require.Equal(t, 1.0, counter(fams, "toolround_cache_requests_total", map[string]string{"tool": "fetch_page", "result": "hit"}))
	require.Equal(t, 0.0, counter(fams, "toolround_cache_requests_total", map[string]string{"tool": "http_request", "result": "hit"}))
}
