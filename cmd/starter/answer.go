package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// answer: the answers to an ask_user call, or to an MCP server's request.

var answerCommand = &command{name: "answer", args: "WORKFLOW_ID CALL_ID ANSWER... | WORKFLOW_ID CALL_ID --json J | --decline | --cancel", npos: 2,
	summary: "Answer an ask_user call (its answers, in order), or a call whose MCP server asks for input:\n" +
		"--json gives the requested form's values (checked against its schema), --decline or --cancel refuses.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.answerJSON, "json", "", "accept an MCP server's request with these values (a JSON object)")
		fs.BoolVar(&f.declineAnswer, "decline", false, "decline an MCP server's request")
		fs.BoolVar(&f.cancelAns, "cancel", false, "cancel an MCP server's request (dismiss it without a choice)")
		fs.StringVar(&f.as, "as", "", "who answers, recorded with the answer; default: your OS user at the host name, user@host")
	},
	run: func(ctx context.Context, x *call) error {
		if err := checkAnswerFlags(x.f, x.pos); err != nil {
			return usageError{err, x.usage}
		}
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		if elicitAnswer(x.f) {
			return answerElicitation(ctx, c, x.pos[0], x.pos[1], x.f)
		}
		return c.Answer(ctx, x.pos[0], x.pos[1], x.pos[2:])
	}}

// elicitAnswer reports whether answer's flags answer an MCP server's
// request (E1) rather than an ask_user call.
func elicitAnswer(f flags) bool {
	return f.answerJSON != "" || f.declineAnswer || f.cancelAns
}

// checkAnswerFlags refuses what answer cannot mean: two of --json,
// --decline and --cancel, answers beside them, --json that is not an
// object, or an ask_user answer without any answer.
func checkAnswerFlags(f flags, pos []string) error {
	n := 0
	for _, on := range []bool{f.answerJSON != "", f.declineAnswer, f.cancelAns} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("answer: give one of --json, --decline and --cancel")
	case n == 1 && len(pos) > 2:
		return errors.New("answer: --json, --decline and --cancel answer an MCP server's request and take no ANSWER arguments")
	case n == 0 && len(pos) < 3:
		return errors.New("answer needs WORKFLOW_ID CALL_ID ANSWER... (an ask_user call) or --json, --decline or --cancel (an MCP server's request)")
	}
	if f.answerJSON != "" {
		var v map[string]any
		if err := json.Unmarshal([]byte(f.answerJSON), &v); err != nil || v == nil {
			return errors.New("answer --json: give the form's values as a JSON object")
		}
	}
	return nil
}

// answerElicitation sends the answer update for an MCP server's request.
func answerElicitation(ctx context.Context, c *client.Client, workflowID, callID string, f flags) error {
	a := round.ElicitAnswer{CallID: callID, Action: round.ElicitAccept, By: f.as, Via: "cli"}
	if a.By == "" {
		a.By = defaultBy()
	}
	switch {
	case f.declineAnswer:
		a.Action = round.ElicitDecline
	case f.cancelAns:
		a.Action = round.ElicitCancel
	default:
		if err := json.Unmarshal([]byte(f.answerJSON), &a.Content); err != nil {
			return err
		}
	}
	return c.AnswerElicitation(ctx, workflowID, a)
}
