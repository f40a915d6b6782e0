package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/workspace"
	"github.com/toolround/toolround/tools"
)

// workspaceUsage is the usage of `starter workspace` (W3).
const workspaceUsage = `usage: starter workspace ls [--json] | du SESSION | rm SESSION | move SESSION HOST

The sessions' workspaces of WORKSPACE=session, TOOLS_WORKDIR/sessions/<session>/
(run it where that folder is; TOOLS_WORKDIR as for the worker, default ./workdir):
  ls            every workspace with its size, files and last change (--json: JSON)
  du SESSION    one workspace's size (JSON)
  rm SESSION    remove a workspace; refused while a round or agent run of the session is open
  move SESSION HOST
                rebind a workspace to the host HOST (its HOST_ID) with WORKSPACE_PLACEMENT=host
                (W4): refused while a round or agent run of the session is open and when no
                worker of HOST polls its queue (W5); the files stay where they were unless
                the folder is shared storage

environment: TOOLS_WORKDIR, WORKSPACE_PLACEMENT, and for rm and move TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TASK_QUEUE, TEMPORAL_TLS_*, TEMPORAL_API_KEY`

// runWorkspace runs `starter workspace ...`.
func runWorkspace(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("workspace needs ls, du, rm or move"), workspaceUsage}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		_, err := fmt.Fprintln(stdout, workspaceUsage)
		return err
	}
	workdir := envconf.Get("TOOLS_WORKDIR", "./workdir")
	mode, err := placement.ParsePlacement(envconf.Get(placement.EnvPlacement, placement.Shared))
	if err != nil {
		return usageError{error: err}
	}
	sub, rest := args[0], args[1:]
	asJSON := false
	var pos []string
	for _, a := range rest {
		switch a {
		case "--json", "-json":
			asJSON = true
		default:
			if strings.HasPrefix(a, "-") {
				err := fmt.Errorf("workspace %s: unknown flag %s", sub, a)
				if c := text.Closest(strings.TrimLeft(a, "-"), []string{"json"}); c != "" {
					err = fmt.Errorf("%w; did you mean --%s?", err, c)
				}
				return usageError{err, workspaceUsage}
			}
			pos = append(pos, a)
		}
	}
	need := map[string]int{"ls": 0, "du": 1, "rm": 1, "move": 2}
	n, ok := need[sub]
	if !ok {
		err := fmt.Errorf("workspace: unknown subcommand %q; want ls, du, rm or move", sub)
		if c := text.Closest(sub, []string{"ls", "du", "rm", "move"}); c != "" {
			err = fmt.Errorf("workspace: unknown subcommand %q; did you mean %q? (ls, du, rm or move)", sub, c)
		}
		return usageError{err, workspaceUsage}
	}
	if len(pos) != n {
		return usageError{fmt.Errorf("workspace %s takes %d argument(s), got %d", sub, n, len(pos)), workspaceUsage}
	}
	if n > 0 {
		if err := tools.CheckSessionID(pos[0]); err != nil {
			return usageError{error: err}
		}
	}
	switch sub {
	case "ls":
		list, err := workspace.List(workdir)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tBYTES\tFILES\tMODIFIED")
		for _, w := range list {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", w.Session, w.Bytes, w.Files, w.Modified.UTC().Format("2006-01-02T15:04:05Z"))
		}
		return tw.Flush()
	case "du":
		info, err := workspace.Usage(workdir, pos[0])
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session %s has no workspace in %s", pos[0], workdir)
		}
		if err != nil {
			return err
		}
		return printJSON(stdout, info)
	case "rm":
		if _, err := workspace.Usage(workdir, pos[0]); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session %s has no workspace in %s", pos[0], workdir)
		}
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		open, err := workspace.OpenWorkflows(ctx, workspace.TemporalLister(c.Temporal(), envconf.TemporalFromEnv().Namespace), pos[0])
		if err != nil {
			return err
		}
		if len(open) > 0 {
			return fmt.Errorf("workspace_busy: %w; wait for it to end or cancel it", &workspace.BusyError{Session: pos[0], Open: open})
		}
		if err := workspace.Remove(workdir, pos[0]); err != nil {
			return err
		}
		if mode == placement.Host {
			if err := placement.Release(ctx, c.Temporal(), pos[0], ""); err != nil {
				return fmt.Errorf("removed the workspace of session %s, but its binding to a host was not released: %w", pos[0], err)
			}
		}
		_, err = fmt.Fprintf(stdout, "removed the workspace of session %s\n", pos[0])
		return err
	default: // move
		return moveWorkspace(ctx, mode, pos[0], pos[1], stdout)
	}
}

// moveWorkspace is `starter workspace move SESSION HOST` (W4, W5).
func moveWorkspace(ctx context.Context, mode, session, host string, stdout io.Writer) error {
	if mode != placement.Host {
		return errors.New("placement_off: rebinding a workspace to a host needs WORKSPACE_PLACEMENT=host (W4); with shared storage every host already sees the workspace")
	}
	if err := placement.CheckHostID(host); err != nil {
		return usageError{error: err}
	}
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	t := envconf.TemporalFromEnv()
	open, err := workspace.OpenWorkflows(ctx, workspace.TemporalLister(c.Temporal(), t.Namespace), session)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return fmt.Errorf("workspace_busy: %w; wait for it to end or cancel it", &workspace.BusyError{Session: session, Open: open})
	}
	b, err := placement.Move(ctx, c.Temporal(), t.TaskQueue, session, host)
	if placement.IsHostUnavailable(err) {
		return fmt.Errorf("host_unavailable: %w", err)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "bound the workspace of session %s to host %s (generation %d); its files stay where they were unless the folder is shared storage\n", session, b.Host, b.Generation)
	return err
}
