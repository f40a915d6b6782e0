package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// readmeUsingScript is the shell block of README "Using it" that starts
// with the round that loads the approvals round's tools: its command lines,
// comments cut off.
func readmeUsingScript(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, using, ok := strings.Cut(string(readme), "## Using it")
	require.True(t, ok)
	i := strings.Index(using, "```sh\nbin/starter round examples/using/find-tools.json")
	require.GreaterOrEqual(t, i, 0, "README \"Using it\" shows the approvals session")
	block, _, _ := strings.Cut(using[i+len("```sh\n"):], "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if j := strings.Index(l, " #"); j >= 0 {
			l = l[:j]
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

var waitsOn = regexp.MustCompile(`(?:approve|deny|extend|answer)\s+(toolround/\S+)\s+(call_\d+)`)

// TestREADMEUsingItRunsAsShown runs every line of README "Using it"'s
// session, in order, through bin/starter against a real worker (the
// README is "a script a test runs"). Before a line answers a call,
// it waits until that call waits, as a person at another terminal would;
// `watch` runs until stopped, so it is stopped after its first events.
func TestREADMEUsingItRunsAsShown(t *testing.T) {
	lines := readmeUsingScript(t)
	e := newEnv(t)
	e.startWorker()
	// A folder laid out as the README's commands expect, with the test's
	// own session in place of s1.
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Dir(starterBin), filepath.Join(dir, "bin")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "examples/using"), 0o755))
	using, err := filepath.Glob("../examples/using/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, using)
	for _, f := range using {
		name := filepath.Base(f)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var in round.Input
		require.NoError(t, json.Unmarshal(b, &in), name)
		require.Nil(t, in.State, "examples/using/%s carries a run state of its own: its round starts --after the one before", name)
		b = bytes.ReplaceAll(b, []byte(`"session_id": "s1"`), []byte(`"session_id": "`+e.session+`"`))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "examples/using", name), b, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "examples/scripted"), 0o755))
	chat, err := os.ReadFile("../examples/scripted/chat.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "examples/scripted/chat.json"), chat, 0o644))
	session := regexp.MustCompile(`\bs1\b`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shell := func(ctx context.Context, line string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir, cmd.Env = dir, e.environ()
		return cmd
	}
	var background []*exec.Cmd
	var bgErr []*bytes.Buffer
	for _, line := range lines {
		line = session.ReplaceAllString(line, e.session)
		switch {
		case line == "wait":
			for i, cmd := range background {
				require.NoError(t, cmd.Wait(), "%v: %s", cmd.Args, bgErr[i])
			}
			background, bgErr = nil, nil
			continue
		case strings.HasSuffix(line, "&"):
			cmd := shell(ctx, strings.TrimSuffix(line, "&"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start(), line)
			background, bgErr = append(background, cmd), append(bgErr, &stderr)
			continue
		case strings.Contains(line, " watch "):
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			out, _ := shell(wctx, line).Output()
			wcancel()
			require.Contains(t, string(out), "round_finished", "%s prints the session's events", line)
			continue
		}
		if m := waitsOn.FindStringSubmatch(line); m != nil {
			var last result
			waits := regexp.MustCompile(`"call_id":\s*"` + m[2] + `"`)
			if !assert.Eventually(t, func() bool {
				last = e.starter(ctx, "", "pending", m[1])
				return last.code == 0 && waits.MatchString(last.stdout)
			}, time.Minute, 50*time.Millisecond) {
				t.Fatalf("%s does not wait before: %s\npending: %s %s\nbackground: %v", m[2], line, last.stdout, last.stderr, bgErr)
			}
		}
		if f := strings.Fields(line); len(f) >= 3 && f[1] == "pending" {
			// The round the README started in the background may not be
			// submitted yet.
			require.Eventually(t, func() bool { return e.starter(ctx, "", "pending", f[2]).code == 0 },
				time.Minute, 50*time.Millisecond, "%s: the round exists", line)
		}
		if strings.Contains(line, " cancel ") {
			wid := strings.Fields(line)[2]
			require.Eventually(t, func() bool {
				r := e.starter(ctx, "", "pending", wid)
				return r.code == 0 && strings.Contains(r.stdout, "call_1")
			}, time.Minute, 50*time.Millisecond, "the round to cancel waits")
		}
		var stdout, stderr bytes.Buffer
		cmd := shell(ctx, line)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s\nstdout: %s\nstderr: %s", line, stdout.String(), stderr.String())
		switch {
		case strings.Contains(line, "--remember"):
			require.Contains(t, stderr.String(), "also approved 1 other waiting call", line)
			require.Contains(t, stderr.String(), "call_2 run_command", line)
		case strings.Contains(line, " agent "):
			require.Equal(t, "6*7 is 42.\n", stdout.String(), "%s: the script's answer\nstderr: %s", line, stderr.String())
		case strings.Contains(line, "--allow-turn"):
			require.Contains(t, stderr.String(), "also approved 1 other waiting call", line)
			require.Contains(t, stderr.String(), "call_6 edit_file", line)
		}
	}
	require.Empty(t, background, "every background line is waited for")

	statuses := func(name string) map[string]round.Status {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		var res round.Result
		require.NoError(t, json.Unmarshal(b, &res), "%s: %s", name, b)
		got := map[string]round.Status{}
		for _, r := range res.Results {
			got[r.CallID] = r.Status
		}
		return got
	}
	require.Equal(t, map[string]round.Status{"call_1": round.StatusOK}, statuses("tools.out"), "find_tools loaded the tools")
	require.Equal(t, map[string]round.Status{
		"call_1": round.StatusOK, "call_2": round.StatusOK, "call_3": round.StatusSkipped, "call_4": round.StatusOK,
		"call_5": round.StatusOK, "call_6": round.StatusOK, "call_7": round.StatusOK,
	}, statuses("approvals.out"))
	require.Equal(t, map[string]round.Status{"call_1": round.StatusCancelled}, statuses("cancel.out"))
	got, err := os.ReadFile(filepath.Join(e.workdir, "plan.txt"))
	require.NoError(t, err, "call_6, approved by --allow-turn, ran")
	require.Equal(t, "ship it\n", string(got))
}
