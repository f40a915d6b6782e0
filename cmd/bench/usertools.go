package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/toolworker"
)

// Users' own tools (SPEC Y) in the benchmark: a read-only tool that answers
// at once, served by a Python tool worker (`python -m toolround.tools
// serve`) and by a Go one (the toolworker package, this binary in
// toolworker mode), each a process of its own on a queue of its own that
// the setup's worker runs (TOOL_QUEUES). The cases pytool10 and gotool10
// are 10 calls of one of them in a round, beside noop10's 10 calls of a
// tool of the worker itself.

// The user tools' names and the kinds of tool worker.
const (
	ToolPyLookup = "bench_py_lookup"
	ToolGoLookup = "bench_go_lookup"
	userPython   = "python"
	userGo       = "go"
)

//go:embed usertools/bench_tools.py
var pythonTools []byte

// goTools are the Go tool worker's tools: the Python tool's twin.
func goTools() []toolworker.Tool {
	return []toolworker.Tool{toolworker.New(ToolGoLookup, func(context.Context, toolworker.Call, struct {
		N int `json:"n"`
	}) (any, error) {
		return "ok", nil
	}, toolworker.ReadOnly(), toolworker.Concurrent(),
		toolworker.Description("Does nothing and answers ok; n keeps the calls of a round distinct."))}
}

// runToolWorker is the Go tool worker process: it serves goTools on
// TOOL_QUEUE, announcing them to the catalog of TOOLROUND_TASK_QUEUE, until
// SIGTERM or until its standard input closes.
func runToolWorker() error {
	queue := os.Getenv("TOOL_QUEUE")
	if queue == "" {
		return errors.New("toolworker: set TOOL_QUEUE")
	}
	ctx, stop := interruptible()
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	c, err := tclient.Dial(tclient.Options{HostPort: envStr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), Namespace: envStr("TEMPORAL_NAMESPACE", "default")})
	if err != nil {
		return fmt.Errorf("toolworker: dial: %w", err)
	}
	defer c.Close()
	return toolworker.Serve(ctx, c, queue, goTools(), toolworker.Options{})
}

// sideProc is a tool worker process of a setup.
type sideProc struct {
	kind    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{}
	logPath string
}

// startToolWorker starts the tool worker of kind (userPython, userGo) on
// queue for the engine's task queue engineQueue; its log is in dir.
func startToolWorker(kind, queue, engineQueue, dir string, env []string) (*sideProc, error) {
	var cmd *exec.Cmd
	switch kind {
	case userGo:
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find own binary: %w", err)
		}
		cmd = exec.Command(exe, "toolworker")
	case userPython:
		py := pythonForTools()
		if py == "" {
			return nil, errors.New("no Python with toolround.tools: set BENCH_PYTHON (scripts/bench.sh finds one as `make run` does)")
		}
		file := filepath.Join(dir, "bench_tools.py")
		if err := os.WriteFile(file, pythonTools, 0o644); err != nil {
			return nil, err
		}
		cmd = exec.Command(py, "-m", "toolround.tools", "serve", file, "--task-queue", queue)
		// This tree's package, as the tests run it, when the benchmark runs
		// from the module's root.
		if src, err := filepath.Abs(filepath.Join("clients", "python", "src")); err == nil {
			if _, err := os.Stat(filepath.Join(src, "toolround", "tools")); err == nil {
				env = append(env, "PYTHONPATH="+src)
			}
		}
		env = append(env, "PYTHONDONTWRITEBYTECODE=1")
	default:
		return nil, fmt.Errorf("no tool worker %q", kind)
	}
	cmd.Env = append(append(os.Environ(), env...), "TOOL_QUEUE="+queue, "TOOLROUND_TASK_QUEUE="+engineQueue)
	logFile, err := os.Create(filepath.Join(dir, kind+"-toolworker.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p := &sideProc{kind: kind, cmd: cmd, done: make(chan struct{}), logPath: logFile.Name()}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s tool worker: %w", kind, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// pythonForTools is the interpreter that serves the Python tool:
// BENCH_PYTHON, else TOOLROUND_PYTHON, else PYTHON_TOOL_WORKER (the one
// scripts/lib.sh installs for `make run`).
func pythonForTools() string {
	for _, k := range []string{"BENCH_PYTHON", "TOOLROUND_PYTHON", "PYTHON_TOOL_WORKER"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// stop ends the tool worker: its standard input closes (the Go one stops),
// SIGTERM (the Python one stops), SIGKILL after ten seconds.
func (p *sideProc) stop() {
	if p == nil {
		return
	}
	_ = p.stdin.Close()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// toolQueue is the queue of a setup's tool worker of kind.
func toolQueue(setupQueue, kind string) string { return setupQueue + "-" + kind + "tools" }

// toolOfKind is the user tool a kind of tool worker serves.
func toolOfKind(kind string) string {
	if kind == userPython {
		return ToolPyLookup
	}
	return ToolGoLookup
}

// startToolWorkers starts the setup's Python and Go tool workers and waits
// until a round runs each one's tool. A tool worker that cannot start or
// does not answer within two minutes leaves its case out of the setup,
// with a line saying why.
func (b *bench) startToolWorkers(ctx context.Context, s *setup, dir string, env []string) {
	s.userTools = map[string]*sideProc{}
	for _, kind := range []string{userPython, userGo} {
		p, err := startToolWorker(kind, toolQueue(s.taskQueue, kind), s.taskQueue, dir, env)
		if err != nil {
			b.logf("%s: the %s user-tool case is left out: %v", s.spec.Name, kind, err)
			continue
		}
		if err := b.waitToolReady(ctx, s, kind, p); err != nil {
			b.logf("%s: the %s user-tool case is left out: %v\n%s", s.spec.Name, kind, err, tail(p.logPath))
			p.stop()
			continue
		}
		s.userTools[kind] = p
	}
}

// waitToolReady runs one-call rounds of the kind's tool until one answers
// ok: the tool is announced, the worker's catalog has it and the tool
// worker polls.
func (b *bench) waitToolReady(ctx context.Context, s *setup, kind string, p *sideProc) error {
	c := Case{Name: "ready", Tool: toolOfKind(kind), Calls: 1}
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		select {
		case <-p.done:
			return errors.New("the tool worker exited")
		default:
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		in := b.input(c, s.spec.Name+"-ready-"+kind, i)
		res, err := s.cl.Run(rctx, in)
		cancel()
		if err == nil && len(res.Results) == 1 && res.Results[0].Status == round.StatusOK {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			last := fmt.Sprint(err)
			if err == nil && len(res.Results) == 1 {
				last = string(res.Results[0].Status) + ": " + res.Results[0].Content
			}
			return fmt.Errorf("no round ran %s within two minutes (last: %s)", c.Tool, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// toolQueuesEnv is the TOOL_QUEUES of a setup's worker: both tool queues,
// trusted, so that the read-only tools run without asking (Y2).
func toolQueuesEnv(setupQueue string) string {
	return "TOOL_QUEUES=" + toolQueue(setupQueue, userPython) + ":trusted," + toolQueue(setupQueue, userGo) + ":trusted"
}
