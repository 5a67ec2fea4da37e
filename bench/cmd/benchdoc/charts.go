package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// drawCharts draws the time and allocation ratios of every case (one
// horizontal bar each, a line at 1.0), and reconcile throughput against
// its model, as SVG files in dir. It returns their paths.
func drawCharts(res *results, dir string) ([]string, error) {
	var paths []string
	for _, c := range []struct{ unit, file, title string }{
		{"ns/op", "time-ratio.svg", "time ours/client-go (log scale; < 1 is faster)"},
		{"allocs/op", "allocs-ratio.svg", "allocations ours/client-go (log scale; < 1 is fewer)"},
	} {
		var names []string
		var vals plotter.Values
		for _, r := range res.cases {
			v := r.ratio(c.unit, "ours", "clientgo")
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				continue
			}
			names = append(names, fmt.Sprintf("%d %s", r.workload, r.cas))
			vals = append(vals, math.Log2(v))
		}
		if len(vals) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = "log2(ratio)"
		bars, err := plotter.NewBarChart(vals, vg.Points(6))
		if err != nil {
			return nil, err
		}
		bars.Horizontal = true
		bars.Color = color.RGBA{R: 70, G: 110, B: 180, A: 255}
		p.Add(bars)
		one, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -1}, {X: 0, Y: float64(len(vals))}})
		if err != nil {
			return nil, err
		}
		one.Color = color.RGBA{R: 200, A: 255}
		p.Add(one)
		p.NominalY(names...)
		path := filepath.Join(dir, c.file)
		if err := p.Save(8*vg.Inch, vg.Length(len(vals))*9*vg.Points(1)+1.5*vg.Inch, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	// Reconcile throughput: measured against the model, per case.
	var names []string
	var ours, cg, model plotter.Values
	for _, r := range res.cases {
		if r.workload != 9 {
			continue
		}
		names = append(names, r.cas)
		ours = append(ours, r.impls["ours"]["rec/s"])
		cg = append(cg, r.impls["clientgo"]["rec/s"])
		model = append(model, r.impls["ours"]["model-rec/s"])
	}
	if len(names) > 0 {
		p := plot.New()
		p.Title.Text = "reconciles/s: ours, client-go, and min(QPS/k, W/(k·RTT)) (0 = no limit)"
		p.X.Label.Text = "reconciles per second"
		w := vg.Points(5)
		for i, s := range []struct {
			name string
			v    plotter.Values
			c    color.RGBA
		}{{"ours", ours, color.RGBA{R: 70, G: 110, B: 180, A: 255}}, {"client-go", cg, color.RGBA{R: 220, G: 130, B: 40, A: 255}}, {"model", model, color.RGBA{R: 120, G: 120, B: 120, A: 255}}} {
			bars, err := plotter.NewBarChart(s.v, w)
			if err != nil {
				return nil, err
			}
			bars.Horizontal = true
			bars.Color = s.c
			bars.Offset = vg.Length(i-1) * w
			p.Add(bars)
			p.Legend.Add(s.name, bars)
		}
		p.Legend.Top = true
		p.NominalY(names...)
		path := filepath.Join(dir, "reconcile-throughput.svg")
		if err := p.Save(8*vg.Inch, vg.Length(len(names))*18*vg.Points(1)+1.5*vg.Inch, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
