package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func caseReport(name string, p50, p99 float64) CaseReport {
	c := *caseNamed(name)
	return CaseReport{Case: c, Latency: Summary{N: 10, P50: p50, P90: p50, P99: p99}}
}

func sampleSetup(name string) SetupReport {
	sr := SetupReport{Name: name, Bound: 3, Cases: []CaseReport{
		caseReport("empty", 40, 60),
		caseReport("noop10", 50, 90),
		caseReport("atmostonce10", 120, 1500),
		{Case: sleepCase, Latency: Summary{N: 5, P50: 880, P99: 900}, History: HistoryStats{Phases: Phases{Pass2: 820}}},
	}, Throughput: []Throughput{
		{InFlight: 1, Case: "noop10", Rounds: 100, Seconds: 5, RoundsPerSecond: 20},
		{InFlight: 4, Case: "noop10", Rounds: 180, Seconds: 4, RoundsPerSecond: 45, WorkerCPUMS: 5.5, ServerCPUMS: 12.25},
		{InFlight: 4, Case: "empty", Rounds: 200, Seconds: 4, RoundsPerSecond: 50},
	}}
	sr.finish(3, 200*time.Millisecond)
	return sr
}

func TestFinishDerivesTheRatios(t *testing.T) {
	sr := sampleSetup("default")
	require.Equal(t, 1.25, sr.Ratios.P50Noop10)
	require.Equal(t, 1.5, sr.Ratios.P99Noop10)
	require.Equal(t, 3.0, sr.Ratios.P50AtMostOnce)
	require.Equal(t, 25.0, sr.Ratios.P99AtMostOnce)
	require.Equal(t, 800.0, sr.Makespan.IdealMS, "ceil(10/3) * 200 ms")
	require.Equal(t, 1.025, sr.Ratios.Makespan)
	require.Equal(t, 1.1, sr.Ratios.MakespanRound)
	require.Equal(t, 1500.0, sr.Ratios.MaxP99MS, "the sleeping case is not a tail")
	require.Equal(t, "atmostonce10", sr.Ratios.MaxLatencyCase)
	require.Equal(t, 1.25, sr.caseByName("noop10").VsFloorP50)
	require.Equal(t, 0.9, sr.Ratios.Throughput4, "45 rounds/s over 50 empty workflows/s, both at 4 in flight")

	require.Equal(t, []string{
		"target not met: ratio_p50_10tools 1.250 <= 1.2",
		"target met:     ratio_p99_10tools 1.500 <= 2",
		"target not met: ratio_p50_10atmostonce 3.000 <= 2.5",
		"target met:     ratio_throughput_4 0.900 >= 0.8",
		"target met:     makespan 1.025 within 10% of the ideal (the whole round: 1.100)",
		"target not met: no multi-second tails: highest p99 1500.0 ms (atmostonce10)",
	}, sr.Targets())
}

func TestTargetsAtTheirBounds(t *testing.T) {
	sr := SetupReport{Ratios: Ratios{P50Noop10: 1.2, P99Noop10: 2, P50AtMostOnce: 2.5, Throughput4: 0.8, Makespan: 1.09, MaxP99MS: 999}}
	for _, line := range sr.Targets() {
		require.True(t, strings.HasPrefix(line, "target met: "), line)
	}
	sr.Ratios = Ratios{P50Noop10: 1.201, P99Noop10: 2.001, P50AtMostOnce: 2.501, Throughput4: 0.799, Makespan: 1.2, MaxP99MS: 1000}
	for _, line := range sr.Targets() {
		require.True(t, strings.HasPrefix(line, "target not met: "), line)
	}
}

func TestFinishWithoutCasesLeavesZeroRatios(t *testing.T) {
	sr := SetupReport{Cases: []CaseReport{caseReport("empty", 40, 60)}}
	sr.finish(3, 200*time.Millisecond)
	require.Zero(t, sr.Ratios.P50Noop10)
	require.Zero(t, sr.Ratios.Makespan)
	require.Zero(t, sr.Ratios.Throughput4, "no throughput measured")
	targets := strings.Join(sr.Targets(), "\n")
	require.Contains(t, targets, "target not met: makespan")
	require.Contains(t, targets, "target not met: ratio_p50_10atmostonce 0.000")
	require.Contains(t, targets, "target not met: ratio_throughput_4 0.000")
}

func TestReportWritesResultsChartsAndRatioLines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep := &Report{Options: ReportOptions{Iterations: 10}, Setups: []SetupReport{sampleSetup("default"), sampleSetup("regular")}}
	require.NoError(t, rep.Write(dir))

	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, 1.25, back.Setups[1].Ratios.P50Noop10)
	for _, name := range []string{"latency.png", "latency-regular.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}

	var out bytes.Buffer
	rep.Print(&out)
	require.Contains(t, out.String(), "\nratio_p50_10tools=1.250\n")
	require.Contains(t, out.String(), "\nratio_p99_10tools=1.500\n")
	require.Contains(t, out.String(), "\nratio_makespan=1.025\n")
	require.Contains(t, out.String(), "\nratio_p50_10atmostonce=3.000\n")
	require.Contains(t, out.String(), "\nratio_throughput_4=0.900\n")
	require.Contains(t, out.String(), "\nratio_p50_10tools[regular]=1.250\n")
	require.Contains(t, out.String(), "\nratio_throughput_4[regular]=0.900\n")
	require.Contains(t, out.String(), "throughput: 4 in flight: 50.0 rounds/s (200 empty rounds in 4.0 s;")
	require.Contains(t, out.String(), "p99 0.0 ms; CPU per round: worker 5.50 ms, server 12.25 ms)\n")
	require.Contains(t, out.String(), "\ntarget met:     ratio_throughput_4 0.900 >= 0.8\n")
}
