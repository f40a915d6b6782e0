package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"one value is every percentile", []float64{7}, 99, 7},
		{"median of two interpolates", []float64{10, 20}, 50, 15},
		{"p0 is the minimum", []float64{1, 2, 3}, 0, 1},
		{"p100 is the maximum", []float64{1, 2, 3}, 100, 3},
		{"p below 0 is clamped", []float64{1, 2, 3}, -5, 1},
		{"p above 100 is clamped", []float64{1, 2, 3}, 150, 3},
		{"p50 of 1..100", hundred, 50, 50.5},
		{"p90 of 1..100", hundred, 90, 90.1},
		{"p99 of 1..100", hundred, 99, 99.01},
		{"a single outlier moves p99 only partly", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 101}, 99, 92},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, Percentile(tc.sorted, tc.p), 1e-9)
		})
	}
}

func TestPercentileOfNothingIsNaN(t *testing.T) {
	require.True(t, math.IsNaN(Percentile(nil, 50)))
}

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"no samples", nil, Summary{}},
		{"one sample", ms(40), Summary{N: 1, Min: 40, Mean: 40, P50: 40, P90: 40, P99: 40, Max: 40}},
		{"unsorted input", ms(30, 10, 20), Summary{N: 3, Min: 10, Mean: 20, P50: 20, P90: 28, P99: 29.8, Max: 30}},
		{"sub-millisecond values are kept to two places", []time.Duration{1500 * time.Microsecond, 2250 * time.Microsecond},
			Summary{N: 2, Min: 1.5, Mean: 1.88, P50: 1.88, P90: 2.17, P99: 2.24, Max: 2.25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Summarize(tc.in))
		})
	}
}

func TestSummarizeDoesNotReorderItsInput(t *testing.T) {
	in := []time.Duration{3, 1, 2}
	Summarize(in)
	require.Equal(t, []time.Duration{3, 1, 2}, in)
}

func TestRatioAndMedian(t *testing.T) {
	require.Equal(t, 1.5, Ratio(75, 50))
	require.Equal(t, 0.333, Ratio(1, 3))
	require.Zero(t, Ratio(10, 0), "no floor measured")
	require.Zero(t, Ratio(math.NaN(), 1))
	require.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	require.Zero(t, Median(nil))
	vals := []float64{3, 1, 2}
	Median(vals)
	require.Equal(t, []float64{3, 1, 2}, vals, "Median must not sort its argument")
}

func TestRotate(t *testing.T) {
	xs := []string{"a", "b", "c"}
	require.Equal(t, []string{"a", "b", "c"}, rotate(xs, 0))
	require.Equal(t, []string{"b", "c", "a"}, rotate(xs, 1))
	require.Equal(t, []string{"c", "a", "b"}, rotate(xs, 5))
	require.Equal(t, []string{"a", "b", "c"}, xs, "rotate must not change its argument")
	require.Empty(t, rotate([]string(nil), 3))
}
