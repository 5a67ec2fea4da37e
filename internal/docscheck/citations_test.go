package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citationPattern finds a test, benchmark, fuzz target or example named
// in prose:
// a whole name, or a long one cut short with an ellipsis
// (TestTheSkeletonKeepsASecret…), or one given to -run (a pattern), which
// must begin a real one. The name after "func " is a definition in an
// example, not a citation.
var citationPattern = regexp.MustCompile(`(func |-run[ =]'?\^?)?\b((?:Test|Benchmark|Fuzz|Example)[A-Z][A-Za-z0-9_]*)(…|\.\.\.)?`)

// TestEveryTestTheDocsCiteExists checks that each test, benchmark or fuzz
// target named in README.md, docs/ (records included) and the Go files'
// comments is a function of some _test.go file of this repository
// (nested modules included). A guarantee names its proof; a proof
// renamed or deleted must not leave the guarantee citing nothing.
func TestEveryTestTheDocsCiteExists(t *testing.T) {
	defined := testFunctions(t)
	if len(defined) < 500 {
		t.Fatalf("only %d test functions found: the walk is broken", len(defined))
	}
	cited := 0
	for _, c := range citations(t) {
		m := citationPattern.FindStringSubmatch(c.text)
		before, name, ellipsis := m[1], m[2], m[3]
		if before == "func " {
			continue
		}
		cited++
		// A name cut short must still say which test it is: a prefix of
		// a word or two would match almost any.
		short := ellipsis != "" && len(name) < 16
		if defined[name] || (ellipsis != "" || before != "") && !short && anyHasPrefix(defined, name) {
			continue
		}
		t.Errorf("%s:%d cites %s, which no _test.go file defines", c.file, c.line, name)
	}
	if cited < 100 {
		t.Fatalf("only %d citations found: the extraction is broken", cited)
	}
}

func anyHasPrefix(names map[string]bool, prefix string) bool {
	for name := range names {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// testFunctions returns the names of the top-level functions of every
// _test.go file under the root, nested modules included.
func testFunctions(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	walkFiles(t, true, goTests, func(p string) error {
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				names[fn.Name.Name] = true
			}
		}
		return nil
	})
	return names
}

// citations returns every test name cited in the markdown of README.md
// and docs/ (its subdirectories too) and in the comments of Go files.
func citations(t *testing.T) []inlineSpan {
	t.Helper()
	var found []inlineSpan
	add := func(file string, firstLine int, text string) {
		for i, line := range strings.Split(text, "\n") {
			for _, m := range citationPattern.FindAllString(line, -1) {
				found = append(found, inlineSpan{file: file, line: firstLine + i, text: m})
			}
		}
	}
	fset := token.NewFileSet()
	docs := func(p string) bool {
		return strings.HasSuffix(p, ".md") && (p == filepath.Join(root, "README.md") || strings.HasPrefix(p, filepath.Join(root, "docs")+string(filepath.Separator)))
	}
	walkFiles(t, true, func(p string) bool { return docs(p) || strings.HasSuffix(p, ".go") }, func(p string) error {
		if docs(p) {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			add(rel(p), 1, string(data))
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, g := range file.Comments {
			for _, c := range g.List {
				add(rel(p), fset.Position(c.Pos()).Line, c.Text)
			}
		}
		return nil
	})
	return found
}
