package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The user tools' rounds are compared with the built-ins' 10-call round of
// the same run (noop10) and with the peer's 10 activities.
func TestFinishComparesUserToolsWithTheBuiltIns(t *testing.T) {
	sr := SetupReport{Name: "default", Bound: 3, Cases: []CaseReport{
		caseReport("empty", 40, 60),
		caseReport("noop10", 50, 90),
		caseReport("peer10", 100, 150),
		caseReport("pytool10", 150, 270),
		caseReport("gotool10", 100, 180),
	}}
	sr.caseByName("pytool10").History.Bytes = 22500
	sr.finish(3, 200*time.Millisecond)
	require.Equal(t, 3.0, sr.Ratios.P50PyTool10VsBuiltin)
	require.Equal(t, 3.0, sr.Ratios.P99PyTool10VsBuiltin)
	require.Equal(t, 2.0, sr.Ratios.P50GoTool10VsBuiltin)
	require.Equal(t, 2.0, sr.Ratios.P99GoTool10VsBuiltin)
	require.Equal(t, 1.5, sr.Ratios.P50PyTool10VsPeer)
	require.Equal(t, 1.0, sr.Ratios.P50GoTool10VsPeer)
	require.Equal(t, 2250.0, sr.Ratios.HistoryPerCallPyTool10)
}

// A setup runs a user tool's case only when its tool worker of that kind
// answered; the other cases run whatever the tool workers did.
func TestUserToolCasesNeedTheirToolWorker(t *testing.T) {
	b := &bench{o: Options{Cases: []string{"noop10", "pytool10", "gotool10"}}}
	require.True(t, b.wantsUserTools())
	names := func(cs []Case) (out []string) {
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	s := &setup{userTools: map[string]*sideProc{userGo: {}}}
	require.Equal(t, []string{"empty", "noop10", "gotool10"}, names(b.casesFor(s)))
	require.Equal(t, []string{"empty", "noop10"}, names(b.casesFor(&setup{})))

	b = &bench{o: Options{Cases: []string{"noop10"}}}
	require.False(t, b.wantsUserTools(), "no tool worker starts for a run without their cases")
}
