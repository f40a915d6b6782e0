package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteLatencyChartWritesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latency.png")
	rows := []ChartRow{
		{Label: "empty workflow", P50: 30, P90: 40, P99: 55},
		{Label: "10 no-op", P50: 35, P90: 50, P99: 70},
		{Label: "10 at-most-once", P50: 120, P90: 180, P99: 240},
	}
	require.NoError(t, WriteLatencyChart(path, "test chart", rows))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, "the chart must be a valid PNG")
	b := img.Bounds()
	require.Greater(t, b.Dx(), b.Dy(), "the chart is wider than tall")
	require.Greater(t, b.Dy(), 200)

	// Bars are drawn in the p99 colour somewhere in the image.
	found := false
	for y := b.Min.Y; y < b.Max.Y && !found; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == uint32(colorP99.R) && g>>8 == uint32(colorP99.G) && bl>>8 == uint32(colorP99.B) {
				found = true
				break
			}
		}
	}
	require.True(t, found, "no p99 bar in the chart")
}

func TestWriteLatencyChartRefuses(t *testing.T) {
	dir := t.TempDir()
	rows := []ChartRow{{Label: "empty workflow", P50: 1, P90: 2, P99: 3}}
	tests := []struct {
		name string
		path string
		rows []ChartRow
		want string
	}{
		{"no rows", filepath.Join(dir, "a.png"), nil, "no rows"},
		{"unknown format", filepath.Join(dir, "a.bmp"), rows, "want a .png"},
		{"missing folder", filepath.Join(dir, "missing", "a.png"), rows, "chart: save"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteLatencyChart(tc.path, "t", tc.rows)
			require.ErrorContains(t, err, tc.want)
			_, statErr := os.Stat(tc.path)
			require.True(t, os.IsNotExist(statErr), "nothing is written on failure")
		})
	}
}
