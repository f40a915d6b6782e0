package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolround/toolround/client"
)

// inbox: the rounds that wait for a person.

var inboxCommand = &command{name: "inbox", args: "[--session S] [--json]",
	summary: "List every round that waits for a person, newest first, with its waiting calls (from Temporal visibility).\n" +
		"A round shows up a moment after it starts to wait, and leaves a moment after it is answered.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.session, "session", "", "only this session's rounds")
		fs.BoolVar(&f.asJSON, "json", false, `print [{"workflow_id","session_id","pending":[...]}] instead of a table`)
	},
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return inbox(ctx, c, x.stdout, x.stderr, x.f)
	}}

// inbox prints the rounds that wait for a person. Rounds that could not be
// asked what they wait for are named on stderr; the others are still listed.
func inbox(ctx context.Context, c *client.Client, stdout, stderr io.Writer, f flags) error {
	rounds, err := c.Inbox(ctx, f.session)
	var skipped *client.InboxError
	if err != nil && !errors.As(err, &skipped) {
		return err
	}
	if f.asJSON {
		err = printJSON(stdout, rounds)
	} else {
		err = printInbox(stdout, rounds, time.Now())
	}
	if skipped != nil {
		fmt.Fprintln(stderr, "starter: inbox: "+oneLine(skipped.Error()))
	}
	return err
}

// printInbox is the inbox as a table: one line per waiting call.
func printInbox(w io.Writer, rounds []client.InboxRound, now time.Time) error {
	if len(rounds) == 0 {
		_, err := fmt.Fprintln(w, "nothing waits for a person")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tCALL\tTOOL\tWAITED FOR\tDEADLINE\tSUBJECT")
	for _, r := range rounds {
		for _, p := range r.Pending {
			subject := p.Subject
			if p.Kind == client.KindAnswer {
				subject = "asks: " + strings.Join(p.Questions, " / ")
			}
			if p.Kind == client.KindElicitation {
				subject = elicitSummary(p.Elicitation)
			}
			if p.Kind == client.KindLimit && len(p.Limits) > 0 {
				counts := make([]string, len(p.Limits))
				for i, l := range p.Limits {
					counts[i] = fmt.Sprintf("%s %d/%d", l.Limit, l.Count, l.Max)
				}
				subject = "limit (" + strings.Join(counts, ", ") + "): " + subject
			}
			deadline := "-"
			if !p.Deadline.IsZero() {
				if left := p.Deadline.Sub(now); left > 0 {
					deadline = "in " + left.Round(time.Second).String()
				} else {
					deadline = "passed"
				}
			}
			waited := "-"
			if !p.Since.IsZero() {
				waited = max(0, now.Sub(p.Since)).Round(time.Second).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.WorkflowID, p.CallID, p.Tool, waited, deadline, oneLine(subject))
		}
	}
	return tw.Flush()
}
