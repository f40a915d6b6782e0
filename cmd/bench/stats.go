package main

import (
	"math"
	"slices"
	"time"
)

// Summary is the distribution of one case's samples, in milliseconds.
type Summary struct {
	N    int     `json:"n"`
	Min  float64 `json:"min_ms"`
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
}

// Percentile is the p-th percentile (0-100) of sorted values, interpolated
// linearly between the two nearest ranks, so that p99 of 200 samples is not
// simply the second largest. It is NaN for no values; p is clamped to 0-100.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	p = min(max(p, 0), 100)
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

// Summarize describes durations; the zero Summary stands for no samples.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	ms := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	slices.Sort(ms)
	return Summary{
		N:    len(ms),
		Min:  round2(ms[0]),
		Mean: round2(sum / float64(len(ms))),
		P50:  round2(Percentile(ms, 50)),
		P90:  round2(Percentile(ms, 90)),
		P99:  round2(Percentile(ms, 99)),
		Max:  round2(ms[len(ms)-1]),
	}
}

// Ratio is a/b rounded to three places, or 0 when b is not positive.
func Ratio(a, b float64) float64 {
	if b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return math.Round(a/b*1000) / 1000
}

// Median of values (not necessarily sorted); 0 for none.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return Percentile(s, 50)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
