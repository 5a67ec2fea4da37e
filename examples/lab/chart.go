package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/guptarohit/asciigraph"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is what a table's chart shows for each row: seconds until all
// converged, or idle requests per second.
func (t *table) figure(i int) float64 {
	if t.idle {
		return t.results[i].idleRate()
	}
	return t.results[i].t.elapsed.Seconds()
}

func (t *table) unit() string {
	if t.idle {
		return "idle req/s"
	}
	return "seconds until all reconciled"
}

// shortName is a row's name without its parenthesis, for chart labels.
func shortName(name string) string {
	name, _, _ = strings.Cut(name, " (")
	return name
}

// writeSVG draws one bar chart per table, side by side, into path.
func writeSVG(path string, tables []*table) error {
	row := make([]*plot.Plot, len(tables))
	for i, t := range tables {
		p := plot.New()
		p.Title.Text = strings.SplitN(t.title, ":", 2)[0]
		p.Y.Label.Text = t.unit()
		values := make(plotter.Values, len(t.rows))
		names := make([]string, len(t.rows))
		for j := range t.rows {
			values[j], names[j] = t.figure(j), shortName(t.rows[j].name)
		}
		bars, err := plotter.NewBarChart(values, vg.Points(24))
		if err != nil {
			return err
		}
		p.Add(bars)
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = 0.5
		p.X.Tick.Label.XAlign = draw.XRight
		row[i] = p
	}
	canvas := vgsvg.New(vg.Length(len(tables))*4*vg.Inch, 4*vg.Inch)
	tiles := draw.Tiles{Rows: 1, Cols: len(tables), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	cells := plot.Align([][]*plot.Plot{row}, tiles, draw.New(canvas))
	for i, p := range row {
		p.Draw(cells[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// printTerminalCharts renders each table as a step chart in the terminal:
// each configuration is a flat stretch, left to right in table order.
func printTerminalCharts(out io.Writer, tables []*table) {
	const width = 14 // columns per configuration
	for _, t := range tables {
		var series []float64
		var legend []string
		for j := range t.rows {
			for range width {
				series = append(series, t.figure(j))
			}
			legend = append(legend, fmt.Sprintf("%s %.3g", shortName(t.rows[j].name), t.figure(j)))
		}
		fmt.Fprintf(out, "\n%s\n", asciigraph.Plot(series, asciigraph.Height(6), asciigraph.Precision(2), asciigraph.LowerBound(0),
			asciigraph.Caption(t.unit()+", left to right: "+strings.Join(legend, " | "))))
	}
}
