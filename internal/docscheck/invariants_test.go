package docscheck

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// TestEveryInvariantInAPackageDocNamesItsProof reads the "# Invariants"
// or "# Guarantees" section of every package doc and checks that each of
// its items (a bullet, or a paragraph outside a list) cites by name the
// test, example or benchmark that proves it. That the names exist is
// TestEveryTestTheDocsCiteExists's job; this one finds the promises
// nobody has proved.
func TestEveryInvariantInAPackageDocNamesItsProof(t *testing.T) {
	sections := 0
	for _, inv := range invariantSections(t) {
		sections++
		for _, item := range invariantItems(inv.text) {
			if !citationPattern.MatchString(item) {
				first, _, _ := strings.Cut(strings.TrimSpace(item), "\n")
				t.Errorf("%s: an invariant names no test that proves it: %q", inv.file, first)
			}
		}
	}
	if sections < 10 {
		t.Fatalf("only %d Invariants sections found: the walk is broken", sections)
	}
}

type docSection struct {
	file string
	text string
}

// invariantSections returns the text of each package doc's "# Invariants"
// and "# Guarantees" sections, each up to the next heading.
func invariantSections(t *testing.T) []docSection {
	t.Helper()
	var sections []docSection
	fset := token.NewFileSet()
	walkFiles(t, true, goSources, func(p string) error {
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || file.Doc == nil {
			return err
		}
		for _, heading := range []string{"\n# Invariants\n", "\n# Guarantees\n"} {
			_, rest, ok := strings.Cut(file.Doc.Text(), heading)
			if !ok {
				continue
			}
			if i := strings.Index(rest, "\n# "); i >= 0 {
				rest = rest[:i]
			}
			sections = append(sections, docSection{file: rel(p), text: rest})
		}
		return nil
	})
	return sections
}

// listItem starts an item of a list in a doc comment's text: a bullet
// ("  - ") or a number ("  1. ").
var listItem = regexp.MustCompile(`\n  (?:-|\d+\.) `)

// invariantItems splits a section into its items: each item of a list,
// and each paragraph outside one.
func invariantItems(text string) []string {
	var items []string
	for _, block := range strings.Split(text, "\n\n") {
		block = "\n" + block
		switch {
		case strings.TrimSpace(block) == "":
		case listItem.MatchString(block):
			items = append(items, listItem.Split(block, -1)[1:]...)
		default:
			items = append(items, block)
		}
	}
	return items
}
