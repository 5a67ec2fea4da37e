package docscheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryInvariantInAPackageDocNamesItsProof reads the "# Invariants"
// section of every package doc and checks that each of its items (a
// bullet, or a paragraph where there are no bullets) cites by name the
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
// section, up to the next heading.
func invariantSections(t *testing.T) []docSection {
	t.Helper()
	var sections []docSection
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || file.Doc == nil {
			return err
		}
		_, rest, ok := strings.Cut(file.Doc.Text(), "\n# Invariants\n")
		if !ok {
			return nil
		}
		if i := strings.Index(rest, "\n# "); i >= 0 {
			rest = rest[:i]
		}
		sections = append(sections, docSection{file: rel(p), text: rest})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sections
}

// invariantItems splits a section into its bullets, or, without bullets,
// its paragraphs.
func invariantItems(text string) []string {
	var items []string
	if strings.Contains(text, "\n  - ") {
		for _, part := range strings.Split(text, "\n  - ")[1:] {
			item, _, _ := strings.Cut(part, "\n\n") // a paragraph after the list is not the bullet's
			items = append(items, item)
		}
		return items
	}
	for _, p := range strings.Split(text, "\n\n") {
		if strings.TrimSpace(p) != "" {
			items = append(items, p)
		}
	}
	return items
}
