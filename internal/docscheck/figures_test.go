package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A measured ratio is quoted with its 95% interval: "0.59× [0.55, 0.63]",
// or with words between, "0.59× client-go's time [0.55, 0.63]". Every
// such figure in README.md and docs/ must be one that a measurement wrote
// down: the scale ladder's generated part of chapter 17 (between its
// markers, rewritten by `make scale`) or a syncpair record in
// docs/17-at-scale/runs/ (written by `syncpair -record`). A figure typed
// by hand, or left behind when a rerun changed it, fails here.

// quotedFigure finds a ratio and the interval that follows it within a
// few words, with no other ratio between them.
var quotedFigure = regexp.MustCompile(`(\d+\.\d+)×[^×\[\]]{0,60}?\[(\d+\.\d+), (\d+\.\d+)\]`)

// ladderResults is the page whose generated part `make scale` writes:
// a record itself.
const ladderResults = "docs/17-at-scale/results.md"

const (
	scaleBegin = "<!-- scale:begin"
	scaleEnd   = "<!-- scale:end -->"
)

func TestEveryQuotedFigureIsFromAMeasurementsRecord(t *testing.T) {
	recorded := recordedFigures(t)
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := outsideGenerated(string(data))
		text = strings.Join(strings.Fields(text), " ") // a figure may wrap across lines
		for _, m := range quotedFigure.FindAllStringSubmatch(text, -1) {
			figure := m[1] + "× [" + m[2] + ", " + m[3] + "]"
			if !recorded[figure] {
				t.Errorf("%s quotes %q, which no record holds (docs/17-at-scale/results.md, or docs/17-at-scale/runs/*.md): rerun and quote the record", rel(file), figure)
			}
		}
	}
}

// recordedFigures returns every "V× [L, H]" that a measurement wrote.
func recordedFigures(t *testing.T) map[string]bool {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ladderResults)))
	if err != nil {
		t.Fatal(err)
	}
	_, generated, ok := strings.Cut(string(page), scaleBegin)
	generated, _, ok2 := strings.Cut(generated, scaleEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q", ladderResults, scaleBegin, scaleEnd)
	}
	sources := []string{generated}
	runs, err := filepath.Glob(filepath.Join(root, "docs", "17-at-scale", "runs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatal("docs/17-at-scale/runs/ holds no syncpair record")
	}
	for _, run := range runs {
		data, err := os.ReadFile(run)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(data))
	}
	figures := map[string]bool{}
	exact := regexp.MustCompile(`\d+\.\d+× \[\d+\.\d+, \d+\.\d+\]`)
	for _, source := range sources {
		for _, figure := range exact.FindAllString(source, -1) {
			figures[figure] = true
		}
	}
	return figures
}

// outsideGenerated is text without the ladder's generated part, which is
// a record itself.
func outsideGenerated(text string) string {
	before, rest, ok := strings.Cut(text, scaleBegin)
	if !ok {
		return text
	}
	_, after, _ := strings.Cut(rest, scaleEnd)
	return before + after
}
