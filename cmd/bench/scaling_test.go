package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseScalingOptions(t *testing.T) {
	t.Setenv("BENCH_WORKERS", "")
	o, err := parseScalingOptions(nil)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 4}, o.Workers)
	require.Equal(t, 16, o.InFlight)
	require.Equal(t, 20*time.Second, o.Duration)
	require.Equal(t, "noop10", o.Case)

	o, err = parseScalingOptions([]string{"-workers", "1, 2,4,4,2,1", "-case", "atmostonce10", "-in-flight", "8"})
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 4, 4, 2, 1}, o.Workers)
	require.Equal(t, "atmostonce10", o.Case)
	require.Equal(t, 8, o.InFlight)

	for _, args := range [][]string{
		{"-workers", "0"},
		{"-workers", "1,x"},
		{"-in-flight", "0"},
		{"-case", "nosuchcase"},
	} {
		_, err := parseScalingOptions(args)
		require.Error(t, err, "%v", args)
	}
}

func TestCPUSecondsOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	require.Positive(t, cpuSeconds(os.Getpid()))
	require.Zero(t, cpuSeconds(-1), "a process that is not there has none")
}

func TestScalingReportPrintsOneRowPerLevel(t *testing.T) {
	r := &ScalingReport{ServerVersion: "1.29.1", Address: "127.0.0.1:7333", Case: "noop10", InFlight: 16, CPUs: 2, Levels: []ScalingLevel{
		{Workers: 1, Throughput: Throughput{Rounds: 100, RoundsPerSecond: 20, Latency: Summary{P50: 700}}},
		{Workers: 2, Throughput: Throughput{Rounds: 120, RoundsPerSecond: 25, Latency: Summary{P50: 600}}},
	}}
	var b bytes.Buffer
	r.Print(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 6, b.String()) // title, blank, header, rule, rows
	require.Contains(t, lines[4], "| 1 | 100 | 20.00 | 1.00x | 700 |")
	require.Contains(t, lines[5], "| 2 | 120 | 25.00 | 1.25x | 600 |")
}
