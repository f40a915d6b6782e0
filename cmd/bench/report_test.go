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
		caseReport("peer10", 100, 150),
		caseReport("peerbounded10", 150, 200),
		caseReport("peerlocal10", 40, 50),
		{Case: sleepCase, Latency: Summary{N: 5, P50: 880, P99: 900}, History: HistoryStats{Phases: Phases{Pass2: 820}}},
	}, Throughput: []Throughput{
		{InFlight: 1, Case: "noop10", Rounds: 100, Seconds: 5, RoundsPerSecond: 20},
		{InFlight: 4, Case: "noop10", Rounds: 180, Seconds: 4, RoundsPerSecond: 45, WorkerCPUMS: 5.5, ServerCPUMS: 12.25},
		{InFlight: 4, Case: "empty", Rounds: 200, Seconds: 4, RoundsPerSecond: 50},
		{InFlight: 4, Case: "peer10", Rounds: 120, Seconds: 4, RoundsPerSecond: 30},
	}}
	sr.caseByName("noop10").History.Bytes = 16750
	sr.caseByName("peer10").History.Bytes = 5400
	sr.caseByName("atmostonce10").History.Bytes = 9800
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
	require.Equal(t, 0.5, sr.Ratios.P50Noop10VsPeer, "50 ms over the peer's 100 ms")
	require.Equal(t, 1.25, sr.Ratios.P50Noop10VsPeerLocal, "50 ms over the peer's local 40 ms")
	require.Equal(t, 0.8, sr.Ratios.P50AtMostOnceVsPeerBounded, "120 ms over the bounded peer's 150 ms")
	require.Equal(t, 1.5, sr.Ratios.Throughput4VsPeer, "45 rounds/s over the peer's 30, both at 4 in flight")
	require.Equal(t, 1675.0, sr.Ratios.HistoryPerCall10)
	require.Equal(t, 540.0, sr.Ratios.HistoryPerCallPeer)

	require.Equal(t, []string{
		"target met:     ratio_p50_10tools_vs_peer_local 1.250 <= 1.3",
		"target met:     ratio_p50_10tools_vs_peer 0.500 <= 0.5",
		"target met:     ratio_p50_10atmostonce_vs_peer_bounded 0.800 <= 1.0",
		"target met:     ratio_throughput_4_vs_peer 1.500 >= 1.0",
		"target not met: history_bytes_per_call_10tools 1675 <= 1024",
		"target met:     history_bytes_per_call_10atmostonce 980 <= 1024",
		"target met:     makespan 1.025 within 10% of the ideal (the whole round: 1.100)",
		"target not met: no multi-second tails: highest p99 1500.0 ms (atmostonce10)",
	}, sr.Targets())
}

func TestTargetsAtTheirBounds(t *testing.T) {
	sr := SetupReport{Ratios: Ratios{P50Noop10: 9, P99Noop10: 9, P50AtMostOnce: 9, Throughput4: 0.1, Makespan: 1.09, MaxP99MS: 999,
		P50Noop10VsPeer: 0.5, P50Noop10VsPeerLocal: 1.3, P50AtMostOnceVsPeerBounded: 1, Throughput4VsPeer: 1, HistoryPerCall10: 1024,
		HistoryPerCallAtMostOnce10: 1024}}
	for _, line := range sr.Targets() {
		require.True(t, strings.HasPrefix(line, "target met: "), line)
	}
	sr.Ratios = Ratios{P50Noop10: 1, P99Noop10: 1, P50AtMostOnce: 1, Throughput4: 1, Makespan: 1.2, MaxP99MS: 1000,
		P50Noop10VsPeer: 0.501, P50Noop10VsPeerLocal: 1.301, P50AtMostOnceVsPeerBounded: 1.001, Throughput4VsPeer: 0.999, HistoryPerCall10: 1025,
		HistoryPerCallAtMostOnce10: 1025}
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
	require.Contains(t, targets, "target not met: ratio_p50_10tools_vs_peer_local 0.000")
	require.Contains(t, targets, "target not met: ratio_throughput_4_vs_peer 0.000")
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
	require.Contains(t, out.String(), "\ntarget met:     ratio_throughput_4_vs_peer 1.500 >= 1.0\n")
	require.NotContains(t, out.String(), "target met:     ratio_throughput_4 ", "the targets over the empty workflow are retired")
	for _, line := range []string{
		"ratio_p50_10tools_vs_peer=0.500", "ratio_p50_10tools_vs_peer_local=1.250",
		"ratio_p50_10atmostonce_vs_peer_bounded=0.800", "ratio_throughput_4_vs_peer=1.500",
		"history_bytes_per_call_10tools=1675", "history_bytes_per_call_peer=540",
		"ratio_throughput_4_vs_peer[regular]=1.500",
	} {
		require.Contains(t, out.String(), "\n"+line+"\n")
	}
}

// TestRatioLinesAreTheJSONNames: every printed ratio line is named as the
// ratio is in results.json, and every ratio is printed.
func TestRatioLinesAreTheJSONNames(t *testing.T) {
	b, err := json.Marshal(Ratios{})
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(b, &fields))
	delete(fields, "max_p99_case") // printed beside max_p99_ms
	var names []string
	for _, l := range (Ratios{}).lines() {
		names = append(names, l.name)
	}
	require.ElementsMatch(t, names, mapKeys(fields))
}

func mapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
