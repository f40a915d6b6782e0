package main

import (
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ChartRow is one group of bars: a case and its latency percentiles.
type ChartRow struct {
	Label string
	P50   float64
	P90   float64
	P99   float64
}

var (
	colorP50 = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorP90 = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorP99 = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// WriteLatencyChart draws p50/p90/p99 bars per row and saves the chart to
// path; the extension (.png, .svg, .pdf) picks the format.
func WriteLatencyChart(path, title string, rows []ChartRow) error {
	if len(rows) == 0 {
		return errors.New("chart: no rows to draw")
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg", ".pdf", ".jpg", ".jpeg":
	default:
		return fmt.Errorf("chart: %s: want a .png, .svg, .pdf or .jpg file", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "latency from start call to result (ms)"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true

	labels := make([]string, len(rows))
	series := [3]plotter.Values{}
	top := 0.0
	for i, r := range rows {
		top = max(top, r.P50, r.P90, r.P99)
		labels[i] = r.Label
		series[0] = append(series[0], r.P50)
		series[1] = append(series[1], r.P90)
		series[2] = append(series[2], r.P99)
	}
	p.Add(plotter.NewGrid())
	width := vg.Points(14)
	names := [3]string{"p50", "p90", "p99"}
	colors := [3]color.Color{colorP50, colorP90, colorP99}
	for i := range series {
		bars, err := plotter.NewBarChart(series[i], width)
		if err != nil {
			return fmt.Errorf("chart: %s bars: %w", names[i], err)
		}
		bars.Color = colors[i]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-1) * width
		p.Add(bars)
		p.Legend.Add(names[i], bars)
	}
	p.NominalX(labels...)
	p.X.Padding = vg.Points(20)
	// Headroom above the tallest bar keeps the legend clear of the bars.
	p.Y.Max = top*1.3 + 1

	if err := p.Save(9*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("chart: save %s: %w", path, err)
	}
	return nil
}
