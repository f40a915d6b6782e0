package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

func TestHelpOnEverySubcommand(t *testing.T) {
	for _, cmd := range commands {
		for _, help := range [][]string{{cmd.name, "--help"}, {cmd.name, "-h"}, {"help", cmd.name}} {
			var out bytes.Buffer
			err := run(context.Background(), help, nil, &out, &bytes.Buffer{})
			require.NoError(t, err, "%v", help)
			require.Equal(t, 0, report(err, &bytes.Buffer{}))
			require.True(t, strings.HasPrefix(out.String(), "usage: starter "+cmd.name+" "), out.String())
			if !cmd.ownArgs {
				require.Contains(t, out.String(), cmd.summary)
			}
		}
	}
	for _, sub := range workspaceCommands {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"workspace", sub.name, "--help"}, nil, &out, &bytes.Buffer{}))
		require.Contains(t, out.String(), "usage: starter workspace")
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"approve", "--help"}, nil, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "--remember")
	require.Contains(t, out.String(), "--allow-turn")
}

// TestEveryCommandIsComplete walks the table of commands, workspace's
// subcommands included: each has a name of its own, a summary and a run
// function, and the list of commands names it.
func TestEveryCommandIsComplete(t *testing.T) {
	check := func(table []*command, within string) {
		seen := map[string]bool{}
		for i, cmd := range table {
			require.NotEmpty(t, cmd.name, "%s command %d has no name", within, i)
			require.False(t, seen[cmd.name], "%s command %q twice", within, cmd.name)
			seen[cmd.name] = true
			require.NotEmpty(t, strings.TrimSpace(cmd.summary), "%s command %q has no summary", within, cmd.name)
			require.NotNil(t, cmd.run, "%s command %q has no run function", within, cmd.name)
			require.False(t, cmd.ownArgs && cmd.flags != nil, "%s command %q parses its own arguments: flags would never be defined", within, cmd.name)
		}
	}
	check(commands, "starter")
	check(workspaceCommands, "workspace")
	list := usage()
	for _, cmd := range commands {
		require.Contains(t, list, "\n  "+cmd.name+" ", "the list of commands names %q", cmd.name)
	}
	require.Contains(t, workspaceUsage, "ls [--json] | du SESSION | rm SESSION | move SESSION HOST")
	for _, sub := range workspaceCommands {
		require.Contains(t, workspaceUsage, "\n  "+sub.name+" ", "workspace's usage names %q", sub.name)
	}
}

func TestUsageErrorsAreReadable(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"approve", "wf"}, {"deny", "wf", "c", "--remember"}, {"tools"}, {"round"}} {
		var stderr bytes.Buffer
		code := report(run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
		require.Equal(t, exitUsage, code, "%v", args)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		require.Greater(t, len(lines), 3, "the usage follows the message, one line each: %q", stderr.String())
		require.True(t, strings.HasPrefix(lines[0], "starter: "), lines[0])
		require.Contains(t, stderr.String(), "usage: starter")
	}
}

func TestEventLinesCarryTheApprovalID(t *testing.T) {
	var out bytes.Buffer
	ev := &eventWriter{w: &out, approvalIDs: map[string]string{}}
	ev.waiting(client.PendingCall{CallID: "c1", ApprovalID: "9f86d0"})
	ev.write(round.Event{ID: "wf/c1/confirm", Type: round.EventConfirmationRequested, WorkflowID: "wf", CallID: "c1"})
	ev.write(round.Event{ID: "wf/finished", Type: round.EventRoundFinished, WorkflowID: "wf"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.Equal(t, "9f86d0", first["approval_id"])
	require.Equal(t, "wf", first["workflow_id"])
	require.Equal(t, "c1", first["call_id"])
	require.NotContains(t, lines[1], "approval_id")
}

// F3: starter tools --format gives the tools array in that format, with the
// same deferred names and turn-context line; no --format is the array as it
// always was.
func TestToolsInEachFormat(t *testing.T) {
	t.Setenv("MCP_CONFIG", "")
	t.Setenv("TOOLS_CONFIG", "")
	read := func(args ...string) map[string]json.RawMessage {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), append([]string{"tools", "--provider", "openai"}, args...), nil, &out, &bytes.Buffer{}))
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out.Bytes(), &m))
		return m
	}
	plain := read()
	require.NotContains(t, plain, "format")
	for _, f := range []string{"openai", "anthropic", "responses"} {
		m := read("--format", f)
		require.JSONEq(t, `"`+f+`"`, string(m["format"]))
		require.JSONEq(t, string(plain["deferred"]), string(m["deferred"]))
		require.JSONEq(t, string(plain["turn_context"]), string(m["turn_context"]))
		var arr []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(m["tools"], &arr))
		require.NotEmpty(t, arr)
		for _, tool := range arr {
			switch f {
			case "openai":
				require.Contains(t, tool, "function")
			case "anthropic":
				require.Contains(t, tool, "input_schema")
				require.Contains(t, tool, "name")
				require.NotContains(t, tool, "type")
			case "responses":
				require.JSONEq(t, `"function"`, string(tool["type"]))
				require.JSONEq(t, `false`, string(tool["strict"]))
				require.Contains(t, tool, "parameters")
			}
		}
	}
	require.JSONEq(t, string(plain["tools"]), string(read("--format", "openai")["tools"]))
	var stderr bytes.Buffer
	code := report(run(context.Background(), []string{"tools", "--provider", "openai", "--format", "gemini"}, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr.String(), `format "gemini" is not one of openai, anthropic, responses`)
}

// TestExtendedLineSaysWhatWasAdded: extend reports what the round added,
// not what was asked, when the 7-day cap clips it (T3).
func TestExtendedLineSaysWhatWasAdded(t *testing.T) {
	until := time.Date(2026, 1, 8, 10, 0, 0, 0, time.UTC)
	require.Equal(t, "call e1: added 1h0m0s; it waits until 2026-01-08T10:00:00Z",
		extendedLine("e1", time.Hour, round.Extended{CallID: "e1", AddedSeconds: 3600, Deadline: until}))
	require.Equal(t, "call e1: added 2h0m0s, not the 48h0m0s asked (a call waits at most 7 days); it waits until 2026-01-08T10:00:00Z",
		extendedLine("e1", 48*time.Hour, round.Extended{CallID: "e1", AddedSeconds: 7200, Deadline: until}))
	require.Equal(t, "call e1: nothing added: it waits until 2026-01-08T10:00:00Z, 7 days after it began to wait, the most a call waits",
		extendedLine("e1", time.Hour, round.Extended{CallID: "e1", Deadline: until}))
	require.Equal(t, "call e1: asked to add 1h0m0s; this round's build does not say what it added",
		extendedLine("e1", time.Hour, round.Extended{}))
}

// TestNearMissesGetTheClosestName: a mistyped command, subcommand, flag or
// enumerated value exits 2 and names the closest known one (U8).
func TestNearMissesGetTheClosestName(t *testing.T) {
	for args, want := range map[string]string{
		"aprove wf c":                               `unknown command "aprove"; did you mean "approve"?`,
		"pendng wf":                                 `did you mean "pending"?`,
		"agnet-cancel x":                            `unknown command "agnet-cancel"`,
		"approve wf c --rember":                     `did you mean --remember?`,
		"deny wf c --reson x":                       `did you mean --reason?`,
		"round --quite -":                           `did you mean --quiet?`,
		"round --aftr r1.out -":                     `did you mean --after?`,
		"tools --provider openai --formt x":         `did you mean --format?`,
		"tools --provider claude_code":              `did you mean "claude-code"?`,
		"tools --provider antropic":                 `did you mean "anthropic"?`,
		"tools --provider openai --format anthropc": `did you mean "anthropic"?`,
		"workspace lss":                             `did you mean "ls"?`,
		"workspace ls --jsn":                        `did you mean --json?`,
		"approve wf c --remember --scope readonly":  `did you mean "read-only"?`,
		"approve wf c --remember --scope wirte":     `did you mean "write"?`,
		"approve wf c --scope write":                `give it with --remember`,
	} {
		var stderr bytes.Buffer
		code := report(run(context.Background(), strings.Fields(args), nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
		require.Equal(t, exitUsage, code, "%s: %s", args, stderr.String())
		first, _, _ := strings.Cut(stderr.String(), "\n")
		require.Contains(t, first, want, args)
	}
}

// TestHumanLinesShowHiddenCharactersT14: every line starter writes for a
// person (the decision prompt, the inbox, watch) shows a call's hidden
// characters as escapes: a terminal never gets an escape sequence from a
// model's arguments, nor text a bidi override reorders.
func TestHumanLinesShowHiddenCharactersT14(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"ls"}`:                        `{"command":"ls"}`,
		"{\"command\":\"rm -rf ~ #\u202esafe\"}":  `{"command":"rm -rf ~ #\u202esafe"}`,
		"clear\x1b[2J\x1b]0;title\x07 done":       `clear\u001b[2J\u001b]0;title\u0007 done`,
		"csi \u009b31m red, nbsp a\u00a0b\n next": `csi \u009b31m red, nbsp a\u00a0b next`,
	} {
		require.Equal(t, want, oneLine(in), "%q", in)
		require.Equal(t, want, shortArgs(in), "%q", in)
	}
}

// A script that cannot be played is a usage error (exit 2) in one line
// that names the file and what is wrong, before anything is started.
func TestAgentRefusesABadScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	for _, tc := range []struct{ model, want string }{
		{"scripted:" + filepath.Join(dir, "missing.json"), "no such file"},
		{"scripted:" + write("bad.json", `{"format": "openai", "turns": [`), "the script is not valid JSON"},
		{"scripted:" + write("typo.json", `{"format": "antropic", "turns": [{}]}`), `did you mean "anthropic"?`},
		{"scripted:" + write("turn.json", `{"turns": [{"role": "assistant", "tool_call": []}]}`), "turn 1 of the script"},
		{"scripted:", "want scripted:FILE"},
		{"gpt-4o", "want scripted:FILE"},
	} {
		var stderr bytes.Buffer
		args := []string{"agent", "--session", "s", "--run", "r", "--model", tc.model, "go"}
		code := report(run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
		require.Equal(t, 2, code, "%s: %s", tc.model, stderr.String())
		require.Contains(t, stderr.String(), tc.want, tc.model)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		require.Contains(t, first, "--model "+tc.model, "the first line names the file")
	}
}
