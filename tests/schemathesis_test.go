package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/console/openapi"
	"github.com/toolround/toolround/internal/testenv"
)

// TestSchemathesis runs schemathesis against a live console (X1): its
// examples, coverage, fuzzing and stateful phases, positive and negative
// cases, with every check that applies to this API: no 500, every status,
// content type, header and body as the OpenAPI document says, bad input
// refused, no operation that works without the token. Its worker ignores
// the rounds' auto_approve (AUTO_APPROVE=deny) and its workdir is the
// test's own, since the random calls come with an approver token.
//
// The event stream never ends, so schemathesis leaves it out: the Go
// tests and the Python client's tests read it and check its events against
// the document. positive_data_acceptance is not asked for: a body of the
// document's shape can still be refused for what only the round knows
// (arguments that are not JSON, an unknown workflow), with a 4xx of the
// document.
func TestSchemathesis(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: schemathesis takes a minute")
	}
	py := python(t, "schemathesis")
	e, c := newConsoleEnv(t, "AUTO_APPROVE=deny")
	maxTime := os.Getenv("SCHEMATHESIS_MAX_TIME")
	if maxTime == "" {
		maxTime = "60"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	report := t.TempDir()
	// The document's example round, in this test's own session: a round of
	// an earlier run with that id may still wait on a task queue that no
	// worker polls any more.
	doc := strings.ReplaceAll(string(openapi.JSON), `"session_id": "s1"`, `"session_id": "`+e.session+`"`)
	docPath := filepath.Join(report, "openapi.json")
	if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the random calls leave running on this task queue ends with
	// the test.
	t.Cleanup(func() { terminateTaskQueue(t, e.taskQueue) })
	// 503 no_worker is the document's answer for a round whose task queue
	// no worker polls any more: a random workflow id (toolround/0/0/0) can
	// name a round that another test left on its own task queue in the
	// shared namespace. Every other 5xx is a failure.
	config := filepath.Join(report, "schemathesis.toml")
	if err := os.WriteFile(config, []byte("[checks.not_a_server_error]\nexpected-statuses = [\"2xx\", \"3xx\", \"4xx\", \"503\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One worker: with two, schemathesis's threads parse Python source at
	// once, which CPython 3.11 before 3.11.9 cannot do safely (its ast
	// module's recursion counter is shared: "SystemError: AST constructor
	// recursion depth mismatch", a runtime error of the tool, not a finding).
	cmd := exec.CommandContext(ctx, py, "-m", "schemathesis.cli", "--config-file", config, "run", docPath, "--url", c.url,
		"--header", "Authorization: Bearer "+c.approver,
		"--phases", "examples,coverage,fuzzing,stateful", "--mode", "all",
		"--checks", "all", "--exclude-checks", "positive_data_acceptance",
		"--exclude-operation-id", "sessionEvents",
		"--max-time", maxTime, "--max-examples", "60", "--request-timeout", "30",
		"--seed", "1", "--workers", "1", "--no-color",
		"--report", "junit", "--report-dir", report)
	cmd.Env = append(os.Environ(), "SCHEMATHESIS_HOOKS=", "NO_COLOR=1")
	cmd.Dir = report
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("schemathesis found responses that the document does not allow (or failed): %v\n%s", err, out)
	}
	t.Logf("schemathesis:\n%s", tail(string(out), 40))
}

// terminateTaskQueue terminates the workflows still open on a task queue.
func terminateTaskQueue(t *testing.T, taskQueue string) {
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(), Logger: testenv.QuietLogger()})
	if err != nil {
		t.Logf("terminate the workflows of %s: %v", taskQueue, err)
		return
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("TaskQueue = %q AND ExecutionStatus = 'Running'", taskQueue), NextPageToken: token})
		if err != nil {
			t.Logf("list the workflows of %s: %v", taskQueue, err)
			return
		}
		for _, ex := range resp.Executions {
			_ = tc.TerminateWorkflow(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, "the schemathesis test ended")
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
