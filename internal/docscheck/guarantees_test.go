package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guaranteeWord marks a sentence that promises something: never, always,
// at most, within, only, every.
var guaranteeWord = regexp.MustCompile(`(?i)\b(never|always|at most|within|only|every)\b`)

// proofLink is a citation of a measurement (a record under docs/) or,
// for what Kubernetes itself promises, of its KEP or issue.
var proofLink = regexp.MustCompile(`\]\([^)]*(runs/|13-benchmarks/)[^)]*\)|\bKEP-\d+|\bkubernetes#\d+`)

// uncitedCeiling is, per chapter, how many sentences that read as a
// guarantee still cite no proof (no test, example or benchmark by name,
// in the sentence or its paragraph, no record, no KEP). The aim is none; the
// ceiling only goes down: a chapter that cites more must lower its
// number here, and one that adds an uncited guarantee fails.
var uncitedCeiling = map[string]int{
	"README.md":                            0,
	"01-why-informers.md":                  0,
	"02-list-watch-resourceversion.md":     0,
	"03-reflector.md":                      0,
	"04-deltafifo.md":                      0,
	"05-indexer-and-lister.md":             0,
	"06-shared-informer.md":                0,
	"07-workqueue.md":                      0,
	"08-writing-a-controller.md":           0,
	"09-reading-your-own-writes.md":        0,
	"10-pitfalls.md":                       0,
	"11-tuning-an-operator.md":             0,
	"12-coming-from-client-go.md":          0,
	"13-benchmarks.md":                     0,
	"14-leader-election.md":                0,
	"15-metrics.md":                        0,
	"16-sharding.md":                       0,
	"17-at-scale.md":                       0,
	"18-testing-your-controller.md":        0,
	"19-coming-from-controller-runtime.md": 0,
}

// TestNoChapterAddsAGuaranteeWithoutItsProof counts, in each chapter, the
// sentences with a guarantee word that cite no proof, and holds each
// chapter to its ceiling in uncitedCeiling. Run it with -v to list them.
func TestNoChapterAddsAGuaranteeWithoutItsProof(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := filepath.Base(file)
		seen[name] = true
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		uncited := uncitedGuarantees(string(data))
		for _, s := range uncited {
			t.Logf("%s: %s", name, s)
		}
		ceiling, ok := uncitedCeiling[name]
		switch {
		case !ok:
			t.Errorf("%s is not in uncitedCeiling: add it, with %d", name, len(uncited))
		case len(uncited) > ceiling:
			t.Errorf("%s has %d guarantees that cite no proof, more than its ceiling of %d: cite the test (or record) that proves the new one (-v lists them)", name, len(uncited), ceiling)
		case len(uncited) < ceiling:
			t.Errorf("%s has %d guarantees that cite no proof, fewer than its ceiling of %d: lower uncitedCeiling to %d", name, len(uncited), ceiling, len(uncited))
		}
	}
	for name := range uncitedCeiling {
		if !seen[name] {
			t.Errorf("uncitedCeiling lists %s, which is not a chapter: remove it", name)
		}
	}
}

// uncitedGuarantees returns the sentences of a chapter's prose (not its
// code blocks or tables) with a guarantee word whose paragraph or list
// item cites no test and no record.
func uncitedGuarantees(text string) []string {
	text = fencePattern.ReplaceAllString(text, "")
	var found []string
	text = regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(text, "") // headings, not the prose under them
	for _, para := range regexp.MustCompile(`\n\s*\n|\n\s*[-*] |\n\d+\. `).Split(text, -1) {
		if strings.HasPrefix(strings.TrimSpace(para), "|") {
			continue
		}
		if citationPattern.MatchString(para) || proofLink.MatchString(para) {
			continue
		}
		for _, sentence := range regexp.MustCompile(`(?:[.!?])\s+`).Split(para, -1) {
			if guaranteeWord.MatchString(sentence) {
				found = append(found, strings.Join(strings.Fields(sentence), " "))
			}
		}
	}
	return found
}
