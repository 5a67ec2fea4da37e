package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/bench/scale"
)

// The ladder rewrites only the part of the results page between its
// markers, keeps the hand-written text around it, and puts each chart
// beside the page, linked by its bare file name (the page and its charts
// share a directory).
func TestWriteReplacesOnlyTheResultsPagesGeneratedPartAndPutsTheChartsBesideIt(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "results.md")
	before, after := "# Results\n\nWritten by hand.\n\n", "\nAlso by hand.\n"
	require.NoError(t, os.WriteFile(page, []byte(before+beginMarker+"\nold tables\n"+endMarker+after), 0o644))

	res := &scale.Results{Config: scale.Config{Sizes: []int{1000, 10_000}}}
	for _, n := range []int{1000, 10_000} {
		res.Rows = append(res.Rows, scale.Row{
			Workload: scale.InitialSync, Shape: scale.ConfigMaps, N: n, Variant: string(scale.Defaults), Unit: "s",
			Ours: []float64{0.1 * float64(n) / 1000}, ClientGo: []float64{0.2 * float64(n) / 1000},
		})
	}
	require.NoError(t, write(page, res, false))

	text, err := os.ReadFile(page)
	require.NoError(t, err)
	got := string(text)
	assert.True(t, strings.HasPrefix(got, before+beginMarker), "the text before the markers is kept")
	assert.True(t, strings.HasSuffix(got, endMarker+after), "the text after the markers is kept")
	assert.NotContains(t, got, "old tables", "the generated part is replaced")
	assert.Contains(t, got, "](sync-time.svg)", "a chart is linked by its file name, relative to the page")
	_, err = os.Stat(filepath.Join(dir, "sync-time.svg"))
	assert.NoError(t, err, "the chart is written beside the page")
}

// A page without the markers is an error naming the page and the markers,
// not a page overwritten.
func TestWriteRefusesAPageWithoutTheMarkers(t *testing.T) {
	page := filepath.Join(t.TempDir(), "results.md")
	require.NoError(t, os.WriteFile(page, []byte("# Results\n"), 0o644))

	err := write(page, &scale.Results{}, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), page)
	assert.Contains(t, err.Error(), beginMarker)
	text, _ := os.ReadFile(page)
	assert.Equal(t, "# Results\n", string(text), "the page is left as it was")
}
