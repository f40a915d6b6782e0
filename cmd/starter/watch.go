package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/round"
)

// watch: a session's events as they happen.

var watchCommand = &command{name: "watch", args: "SESSION_ID", npos: 1,
	summary: "Print the session's events as they happen; needs Redis.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.BoolVar(&f.asJSON, "json", false, "one JSON object per line")
		fs.BoolVar(&f.all, "all", false, "from the start of the stream, not only new events")
	},
	run: func(ctx context.Context, x *call) error {
		return watch(ctx, x.stdout, x.pos[0], x.f.asJSON, x.f.all)
	}}

func watch(ctx context.Context, w io.Writer, sessionID string, asJSON, all bool) error {
	url := envconf.RedisURL()
	if url == "" {
		return errors.New("watch needs Redis (REDIS_URL): events are published to a Redis stream per session")
	}
	rc, err := cache.Open(ctx, cache.Options{URL: url, OpTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer rc.Close()
	from := "$"
	if all {
		from = "0"
	}
	return rc.Events().Watch(ctx, sessionID, from, func(e round.Event) error {
		if asJSON {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(w, string(b))
			return err
		}
		_, err := fmt.Fprintln(w, FormatEvent(e))
		return err
	})
}

// FormatEvent is one readable line per event.
func FormatEvent(e round.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s/round %d  %-22s", e.Time.Local().Format("15:04:05.000"), e.RunID, e.Round, e.Type)
	if e.CallID != "" {
		fmt.Fprintf(&b, "  %s %s", e.CallID, e.Tool)
	}
	if e.Status != "" {
		fmt.Fprintf(&b, "  [%s]", e.Status)
	}
	if e.Type == round.EventCallFinished {
		fmt.Fprintf(&b, "  %d ms", e.DurationMS)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, "  %s", oneLine(e.Detail))
	}
	return b.String()
}
