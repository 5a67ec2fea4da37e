package scale

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestALogLogChartIsWellFormedSVGWithAPointPerMeanAndTheSlopes(t *testing.T) {
	svg := logLogChart("sync <time>", "seconds", []series{
		{name: Ours, color: "blue", n: []float64{1e3, 1e4, 1e5}, y: []float64{0.01, 0.1, 1}},
		{name: ClientGo, color: "red", n: []float64{1e3, 1e4, 1e5}, y: []float64{0.02, 0.2, 2.5}},
	}, []string{"1.00", "1.05"})
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if err != nil {
			require.Equal(t, "EOF", err.Error(), "the SVG must parse")
			break
		}
	}
	assert.Equal(t, 6, strings.Count(svg, "<circle"))
	assert.Contains(t, svg, "sync &lt;time&gt;")
	assert.Contains(t, svg, "ours, slope 1.00")
	assert.Contains(t, svg, "client-go, slope 1.05")
	assert.Contains(t, svg, ">100k<", "the x axis is labelled in objects")
}
