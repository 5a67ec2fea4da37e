package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root directory, two levels up from this package.
var root = filepath.Join("..", "..")

// markdownFiles returns README.md, every chapter under docs/ and the scale
// ladder's results page.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, filepath.FromSlash(ladderResults))}
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, matches...)
}

// linkPattern finds markdown links; fencePattern and inlineCodePattern
// find code, whose brackets and parentheses are not links.
var (
	linkPattern       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fencePattern      = regexp.MustCompile("(?s)```.*?```")
	inlineCodePattern = regexp.MustCompile("`[^`\n]*`")
)

func TestEveryRelativeLinkInTheDocsResolves(t *testing.T) {
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prose := inlineCodePattern.ReplaceAllString(fencePattern.ReplaceAllString(string(data), ""), "")
		for _, m := range linkPattern.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(file), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel(file), m[1])
			}
		}
	}
}

var snippetPattern = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestEveryGoSnippetInTheDocsIsCompiledCode checks that each ```go block in
// the markdown appears, line for line (ignoring indentation), in a Go file
// of this module, which the build compiles and the tests run. So a snippet
// cannot drift from the code it shows.
func TestEveryGoSnippetInTheDocsIsCompiledCode(t *testing.T) {
	sources := normalizedGoSources(t)
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range snippetPattern.FindAllStringSubmatch(string(data), -1) {
			snippet := normalize(m[1])
			if snippet == "" {
				continue
			}
			if !strings.Contains(sources, snippet) {
				first, _, _ := strings.Cut(snippet, "\n")
				t.Errorf("%s: a Go snippet starting %q is not in any Go file: copy it from compiled code", rel(file), first)
			}
		}
	}
}

// normalize trims every line and drops blank ones.
func normalize(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func normalizedGoSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDir(d.Name()) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.WriteString(normalize(string(data)))
			b.WriteString("\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEveryExportedIdentifierHasADocCommentStartingWithItsName walks every
// non-test Go file and checks the exported types, functions, methods,
// constants and variables. A constant or variable in a group may instead
// be covered by the group's comment.
func TestEveryExportedIdentifierHasADocCommentStartingWithItsName(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDir(d.Name()) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if file.Name.Name == "main" {
			return nil // programs export nothing
		}
		for _, missing := range undocumented(file) {
			t.Errorf("%s: %s", rel(fset.Position(missing.pos).String()), missing.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type problem struct {
	pos  token.Pos
	what string
}

func undocumented(file *ast.File) []problem {
	var out []problem
	check := func(name *ast.Ident, doc *ast.CommentGroup, kind string) {
		if !name.IsExported() {
			return
		}
		text := ""
		if doc != nil {
			text = doc.Text()
		}
		// "Deprecated"-style or article-led comments ("A Foo is ...") are
		// allowed, as Go's own guidelines allow them.
		for _, prefix := range []string{name.Name, "A " + name.Name, "An " + name.Name, "The " + name.Name} {
			if strings.HasPrefix(text, prefix) {
				return
			}
		}
		if text == "" {
			out = append(out, problem{name.Pos(), kind + " " + name.Name + " has no doc comment"})
		} else {
			first, _, _ := strings.Cut(text, "\n")
			out = append(out, problem{name.Pos(), kind + " " + name.Name + "'s doc comment does not start with its name: " + first})
		}
	}
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && !exportedReceiver(d.Recv) {
				continue
			}
			check(d.Name, d.Doc, "func")
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					doc := s.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					check(s.Name, doc, "type")
				case *ast.ValueSpec:
					for _, name := range s.Names {
						doc := s.Doc
						if doc == nil {
							doc = s.Comment // a trailing comment on the same line
						}
						if doc == nil && d.Lparen.IsValid() && d.Doc != nil {
							continue // covered by the group's comment
						}
						if doc == nil {
							doc = d.Doc
						}
						if s.Comment != nil && s.Doc == nil {
							continue // a trailing comment documents it: `X = 1 // what X is`
						}
						check(name, doc, "value")
					}
				}
			}
		}
	}
	return out
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	for {
		switch t := typ.(type) {
		case *ast.StarExpr:
			typ = t.X
		case *ast.IndexExpr:
			typ = t.X
		case *ast.IndexListExpr:
			typ = t.X
		case *ast.Ident:
			return t.IsExported()
		default:
			return false
		}
	}
}

func rel(path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}
