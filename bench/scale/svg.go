package scale

import (
	"fmt"
	"math"
	"strings"
)

// series is one line of a chart: a library's means at each size.
type series struct {
	name  string
	color string
	n, y  []float64
}

// logLogChart draws series on log-log axes as a small standalone SVG,
// with a grid line at each power of ten and the slope in the legend.
func logLogChart(title, yUnit string, all []series, slopes []string) string {
	const w, h, left, right, top, bottom = 640.0, 360.0, 70.0, 20.0, 40.0, 50.0
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range all {
		for i := range s.n {
			minX, maxX = math.Min(minX, s.n[i]), math.Max(maxX, s.n[i])
			minY, maxY = math.Min(minY, s.y[i]), math.Max(maxY, s.y[i])
		}
	}
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(n float64) float64 { return left + (math.Log10(n)-lx0)/(lx1-lx0)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - (math.Log10(y)-ly0)/(ly1-ly0)*(h-top-bottom) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="20" font-size="14">%s</text>`+"\n", left, escape(title))
	for e := lx0; e <= lx1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n",
			x, top, x, h-bottom, x, h-bottom+16, Count(int(math.Pow(10, e))))
	}
	for e := ly0; e <= ly1; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, y, w-right, y, left-6, y+4, decade(e))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">objects (log)</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&b, `<text x="14" y="%g" transform="rotate(-90 14 %g)" text-anchor="middle">%s (log)</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2, escape(yUnit))
	for i, s := range all {
		var pts []string
		for j := range s.n {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.n[j]), py(s.y[j])))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(s.n[j]), py(s.y[j]), s.color)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.color)
		label := s.name
		if i < len(slopes) && slopes[i] != "" {
			label += ", slope " + slopes[i]
		}
		fmt.Fprintf(&b, `<text x="%g" y="%d" fill="%s">%s</text>`+"\n", left+10, int(top)+16+16*i, s.color, escape(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// decade labels 10^e: 1ms, 100, 1G... plainly, as 1e-3 or 1e5.
func decade(e float64) string {
	if e >= 0 && e <= 3 {
		return fmt.Sprintf("%g", math.Pow(10, e))
	}
	return fmt.Sprintf("1e%d", int(e))
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
