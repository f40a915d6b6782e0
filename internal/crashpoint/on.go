//go:build crashpoints

package crashpoint

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
)

// Enabled reports whether this build stops at crash points.
func Enabled() bool { return true }

var (
	mu      sync.Mutex
	counts  = map[string]int{}
	loaded  sync.Once
	trace   *os.File
	atName  string
	atN     int
	reached string
	pause   bool
)

func load() {
	if p := os.Getenv("CRASH_TRACE"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			panic("crashpoint: CRASH_TRACE: " + err.Error())
		}
		trace = f
	}
	if at := os.Getenv("CRASH_AT"); at != "" {
		name, n, ok := strings.Cut(at, "#")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || k < 1 {
			panic("crashpoint: CRASH_AT is NAME#N, N from 1: " + at)
		}
		atName, atN = name, k
	}
	reached = os.Getenv("CRASH_REACHED")
	pause = os.Getenv("CRASH_ACTION") == "pause"
}

func hit(name string) {
	loaded.Do(load)
	mu.Lock()
	counts[name]++
	n := counts[name]
	if trace != nil {
		fmt.Fprintln(trace, name)
	}
	stop := name == atName && n == atN
	mu.Unlock()
	if !stop {
		return
	}
	if reached != "" {
		_ = os.WriteFile(reached, []byte(fmt.Sprintf("%s#%d\n", name, n)), 0o644)
	}
	if !pause {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal ends the process
	}
	for {
		if _, err := os.Stat(reached); os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func activityType(ctx context.Context) string {
	defer func() { _ = recover() }() // a context that is not an activity's
	return activity.GetInfo(ctx).ActivityType.Name
}
