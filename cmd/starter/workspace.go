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

var workspaceCommand = &command{name: "workspace", args: "ls|du|rm|move [SESSION [HOST]]",
	summary: "List, measure or remove the sessions' workspaces (WORKSPACE=session).",
	ownArgs: true, run: runWorkspace}

// workspaceCommands are workspace's subcommands; each takes exactly npos
// arguments, and --json.
var workspaceCommands = []*command{
	{name: "ls", args: "[--json]", summary: "every workspace with its size, files and last change (--json: JSON)",
		run: func(_ context.Context, x *call) error {
			workdir, _, err := workspaceEnv()
			if err != nil {
				return err
			}
			list, err := workspace.List(workdir)
			if err != nil {
				return err
			}
			if x.f.asJSON {
				return printJSON(x.stdout, list)
			}
			tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tBYTES\tFILES\tMODIFIED")
			for _, w := range list {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", w.Session, w.Bytes, w.Files, w.Modified.UTC().Format("2006-01-02T15:04:05Z"))
			}
			return tw.Flush()
		}},
	{name: "du", args: "SESSION", npos: 1, summary: "one workspace's size (JSON)",
		run: func(_ context.Context, x *call) error {
			workdir, _, err := workspaceEnv()
			if err != nil {
				return err
			}
			info, err := workspace.Usage(workdir, x.pos[0])
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("session %s has no workspace in %s", x.pos[0], workdir)
			}
			if err != nil {
				return err
			}
			return printJSON(x.stdout, info)
		}},
	{name: "rm", args: "SESSION", npos: 1, summary: "remove a workspace; refused while a round or agent run of the session is open",
		run: removeWorkspace},
	{name: "move", args: "SESSION HOST", npos: 2, summary: "rebind a workspace to the host HOST (its HOST_ID) with WORKSPACE_PLACEMENT=host (W4)",
		run: func(ctx context.Context, x *call) error {
			_, mode, err := workspaceEnv()
			if err != nil {
				return err
			}
			return moveWorkspace(ctx, mode, x.pos[0], x.pos[1], x.stdout)
		}},
}

// workspaceEnv is the workdir and the placement mode the environment
// gives; a placement it does not know is a usage error.
func workspaceEnv() (workdir, mode string, err error) {
	mode, err = placement.ParsePlacement(envconf.Get(placement.EnvPlacement, placement.Shared))
	if err != nil {
		return "", "", usageError{error: err}
	}
	return envconf.Get("TOOLS_WORKDIR", "./workdir"), mode, nil
}

// runWorkspace runs `starter workspace SUBCOMMAND [ARGS] [--json]`: the
// subcommand comes first, --json anywhere after it.
func runWorkspace(ctx context.Context, x *call) error {
	args := x.pos
	if len(args) == 0 {
		return usageError{errors.New("workspace needs ls, du, rm or move"), workspaceUsage}
	}
	for i, a := range args {
		if (i == 0 && a == "help") || a == "-h" || a == "--help" || a == "-help" || a == "--h" {
			_, err := fmt.Fprintln(x.stdout, workspaceUsage)
			return err
		}
	}
	if _, _, err := workspaceEnv(); err != nil {
		return err
	}
	name, rest := args[0], args[1:]
	sub := &call{stdin: x.stdin, stdout: x.stdout, stderr: x.stderr, usage: workspaceUsage}
	for _, a := range rest {
		switch a {
		case "--json", "-json":
			sub.f.asJSON = true
		default:
			if strings.HasPrefix(a, "-") {
				err := fmt.Errorf("workspace %s: unknown flag %s", name, a)
				if c := text.Closest(strings.TrimLeft(a, "-"), []string{"json"}); c != "" {
					err = fmt.Errorf("%w; did you mean --%s?", err, c)
				}
				return usageError{err, workspaceUsage}
			}
			sub.pos = append(sub.pos, a)
		}
	}
	var cmd *command
	var names []string
	for _, c := range workspaceCommands {
		names = append(names, c.name)
		if c.name == name {
			cmd = c
		}
	}
	if cmd == nil {
		err := fmt.Errorf("workspace: unknown subcommand %q; want ls, du, rm or move", name)
		if c := text.Closest(name, names); c != "" {
			err = fmt.Errorf("workspace: unknown subcommand %q; did you mean %q? (ls, du, rm or move)", name, c)
		}
		return usageError{err, workspaceUsage}
	}
	if len(sub.pos) != cmd.npos {
		return usageError{fmt.Errorf("workspace %s takes %d argument(s), got %d", name, cmd.npos, len(sub.pos)), workspaceUsage}
	}
	if cmd.npos > 0 {
		if err := tools.CheckSessionID(sub.pos[0]); err != nil {
			return usageError{error: err}
		}
	}
	return cmd.run(ctx, sub)
}

// removeWorkspace is `starter workspace rm SESSION` (W3): refused while a
// round or agent run of the session is open.
func removeWorkspace(ctx context.Context, x *call) error {
	workdir, mode, err := workspaceEnv()
	if err != nil {
		return err
	}
	session := x.pos[0]
	if _, err := workspace.Usage(workdir, session); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s has no workspace in %s", session, workdir)
	}
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	open, err := workspace.OpenWorkflows(ctx, workspace.TemporalLister(c.Temporal(), envconf.TemporalFromEnv().Namespace), session)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return fmt.Errorf("workspace_busy: %w; wait for it to end or cancel it", &workspace.BusyError{Session: session, Open: open})
	}
	if err := workspace.Remove(workdir, session); err != nil {
		return err
	}
	if mode == placement.Host {
		if err := placement.Release(ctx, c.Temporal(), session, ""); err != nil {
			return fmt.Errorf("removed the workspace of session %s, but its binding to a host was not released: %w", session, err)
		}
	}
	_, err = fmt.Fprintf(x.stdout, "removed the workspace of session %s\n", session)
	return err
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
