package engine

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/toolround/toolround/approval"
)

// probeTimeout bounds one program's version probe at start.
const probeTimeout = 3 * time.Second

// probeTables asks each tabled program for its version (T11), once at
// start, with the worker's PATH, and returns, sorted, the programs found
// outside their table's tested range, each named in one log line: the
// rounds record them in their snapshot (Snapshot.Untested), and their
// rules then match exact commands only. A program that is not there is
// left out: it never runs. One that is there but prints no version it
// understands is out of range.
func probeTables(ctx context.Context, logger *slog.Logger, probes []approval.VersionProbe, lookPath func(string) (string, error)) []string {
	type found struct{ program, version, tested string }
	var (
		mu  sync.Mutex
		out []found
		wg  sync.WaitGroup
	)
	for _, p := range probes {
		path, err := lookPath(p.Program)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			b, err := exec.CommandContext(pctx, path, p.Args...).CombinedOutput()
			var v string
			ok := false
			if err == nil || errors.As(err, new(*exec.ExitError)) && len(b) > 0 {
				v, ok = approval.InTestedRange(firstLine(b), p.Tested)
			}
			if !ok {
				mu.Lock()
				out = append(out, found{p.Program, v, p.Tested})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].program < out[j].program })
	names := make([]string, len(out))
	for i, f := range out {
		names[i] = f.program
		v := f.version
		if v == "" {
			v = "unknown"
		}
		logger.Warn("option table: program outside its tested range, its rules match exact commands only", "program", f.program, "version", v, "tested", f.tested)
	}
	return names
}

// firstLine is the first non-empty line of a probe's output.
func firstLine(b []byte) string {
	start := 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '\n' {
			if line := b[start:i]; len(line) > 0 {
				return string(line)
			}
			start = i + 1
		}
	}
	return ""
}
