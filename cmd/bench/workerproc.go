package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The benchmark's side of a worker process: this binary started in worker
// mode (worker.go), its ready line, and its stop.

// workerProc is a bench worker process.
type workerProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{}
	logPath string
	dir     string // its log and work directory, removed when it stops
}

type readyLine struct {
	bound    int
	localMax string
}

// startWorker starts this binary in worker mode and waits until it polls.
func startWorker(ctx context.Context, taskQueue string, env []string) (*workerProc, readyLine, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, readyLine{}, fmt.Errorf("find own binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "toolround-bench-")
	if err != nil {
		return nil, readyLine{}, fmt.Errorf("worker dir: %w", err)
	}
	logFile, err := os.Create(filepath.Join(dir, "worker.log"))
	if err != nil {
		return nil, readyLine{}, fmt.Errorf("worker log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, "worker")
	base := []string{"TASK_QUEUE=" + taskQueue, "TOOLS_WORKDIR=" + filepath.Join(dir, "workdir")}
	if os.Getenv("LOG_LEVEL") == "" {
		base = append(base, "LOG_LEVEL=warn")
	}
	if err := os.MkdirAll(filepath.Join(dir, "workdir"), 0o755); err != nil {
		return nil, readyLine{}, fmt.Errorf("worker dir: %w", err)
	}
	// Later entries win, so a setup's own variables override the defaults.
	cmd.Env = append(append(os.Environ(), base...), env...)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, readyLine{}, fmt.Errorf("worker stdout: %w", err)
	}
	w := &workerProc{cmd: cmd, done: make(chan struct{}), logPath: logFile.Name(), dir: dir}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, readyLine{}, fmt.Errorf("worker stdin: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, readyLine{}, fmt.Errorf("start worker: %w", err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), readyPrefix) {
				lines <- sc.Text()
			}
		}
		_ = cmd.Wait()
		close(w.done)
	}()
	select {
	case line := <-lines:
		return w, parseReady(line), nil
	case <-w.done:
		return nil, readyLine{}, fmt.Errorf("the worker exited before it was ready:\n%s", tail(w.logPath))
	case <-time.After(time.Minute):
		w.stop()
		return nil, readyLine{}, fmt.Errorf("the worker was not ready within a minute:\n%s", tail(w.logPath))
	case <-ctx.Done():
		w.stop()
		return nil, readyLine{}, ctx.Err()
	}
}

func parseReady(line string) readyLine {
	var r readyLine
	for f := range strings.FieldsSeq(line) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "bound":
			_, _ = fmt.Sscan(v, &r.bound)
		case "local_max":
			r.localMax = v
		}
	}
	return r
}

// stop closes the worker's standard input, which stops it, and kills it if
// it has not stopped within ten seconds.
func (w *workerProc) stop() {
	if w == nil {
		return
	}
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
	_ = os.RemoveAll(w.dir)
}

// kill ends the worker with SIGKILL, as a crash would, and removes its
// directory once it is gone.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
	_ = os.RemoveAll(w.dir)
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
