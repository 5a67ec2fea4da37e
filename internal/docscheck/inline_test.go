package docscheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modulePath is this module's import path: an inline expression is
// checked when it names one of its packages.
const modulePath = "github.com/listwatch/informer"

// otherPackages lists inline spans that name a package of another
// module which shares its name with one of ours (client-go's workqueue,
// leaderelection): they are not this module's to check. The key is the
// file and the span.
var otherPackages = map[string]string{
	"docs/12-coming-from-client-go.md: workqueue.MetricsProvider":    "client-go's column of the table",
	"docs/12-coming-from-client-go.md: leaderelection.LeaderElector": "client-go's column of the table",
	"docs/13-benchmarks.md: workqueue.Typed":                         "client-go's queue, compared with ours",
}

// An inline span is a piece of code in backquotes inside prose:
// `leaderelection.TermOf(ctx)` in a chapter or a doc comment. It is
// checked when it parses as a Go expression that names a package of
// this module (leaderelection.TermOf), with the names it does not
// declare (ctx) left free.
type inlineSpan struct {
	file string // relative to the module root
	line int
	text string
}

// TestEveryInlineGoExpressionInTheDocsTypeChecks compiles every inline
// span of README.md, docs/ and the doc comments that is a Go expression
// naming a package of this module, so `leaderelection.TermOf(ctx).End()`
// fails (TermOf returns two values) where a reader would copy it.
//
// What it cannot know it leaves alone: a free lower-case name (ctx, q, n)
// is a variable the prose has in mind, so "undefined: ctx" is no error;
// a bare name (`sharedinformer.InformerFor`, `workqueue.RunOptions`) is
// a reference, not a use, so it must exist but need not be instantiated.
// An exported name without a package (`RunOptions` in
// `workqueue.Run(ctx, q, r, RunOptions{Workers: n})`) belongs to the
// span's package when that package declares it.
func TestEveryInlineGoExpressionInTheDocsTypeChecks(t *testing.T) {
	imports := importNames(t)
	exported := moduleExports(t, imports)
	spans := append(markdownSpans(t), commentSpans(t)...)

	dir, err := os.MkdirTemp(filepath.Join(root, "internal", "docscheck"), "_inline")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}

	// A span that only names something goes to package "names", one
	// that uses it to package "uses"; go build reports each package's
	// errors under its own "# import/path" line.
	for _, sub := range []string{"names", "uses"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	seenOther := map[string]bool{}
	for _, s := range spans {
		if key := s.file + ": " + s.text; otherPackages[key] != "" {
			seenOther[key] = true
			continue
		}
		src, bare, ok := inlineFile(s, filepath.Join(abs, s.file), imports, exported)
		if !ok {
			continue
		}
		n++
		sub := "uses"
		if bare {
			sub = "names"
		}
		if err := os.WriteFile(filepath.Join(dir, sub, fmt.Sprintf("s%d.go", n)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for key := range otherPackages {
		if !seenOther[key] {
			t.Errorf("otherPackages lists %q, which is no longer in the docs: remove it", key)
		}
	}
	if n < 100 {
		t.Fatalf("only %d inline Go expressions found in the docs: the extraction is broken", n)
	}

	rel := "./" + filepath.ToSlash(mustRel(t, root, dir))
	cmd := exec.Command("go", "build", "-gcflags=-e", rel+"/names", rel+"/uses")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("go build did not run: %v", err)
	}
	var failures []string
	inNames := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "# ") {
			inNames = strings.HasSuffix(line, "/names")
			continue
		}
		if line == "" || freeName.MatchString(line) || inNames && referenceOnly.MatchString(line) {
			continue
		}
		failures = append(failures, strings.ReplaceAll(line, abs+string(filepath.Separator), ""))
	}
	if len(failures) > 0 {
		t.Errorf("inline Go in the docs does not type-check (fix the prose, or the code it names):\n%s", strings.Join(failures, "\n"))
	}
}

var (
	// freeName is the error for a name the prose has in mind (a variable,
	// a type parameter, a field), or for a generic function whose type
	// arguments would be inferred from such a name.
	freeName = regexp.MustCompile(`: undefined: [A-Za-z_][A-Za-z0-9_]*$|declared and not used|imported and not used|cannot use generic function .* without instantiation`)
	// referenceOnly are the errors of a bare name used as a value: a type,
	// a generic function or type not instantiated, a field named on its
	// type (reflector.Tuning.PageSize).
	referenceOnly = regexp.MustCompile(`is not an expression|not an expression|without instantiation|has no method|is not used`)
)

// inlineFile turns a span into a Go file that uses it, or says it is no
// inline Go to check. bare reports a span that only names something.
func inlineFile(s inlineSpan, absFile string, imports map[string]string, exported map[string]map[string]bool) (src string, bare, ok bool) {
	text := strings.TrimSpace(s.text)
	if !strings.Contains(text, ".") || strings.Contains(text, "/") {
		return "", false, false // no package named, or a path, a URL, a list (Added/Updated)
	}
	expr, err := parser.ParseExpr(text)
	if err != nil {
		return "", false, false
	}
	pkg := rootPackage(expr, imports)
	if pkg == "" {
		return "", false, false
	}
	qualify(expr, pkg, exported[pkg])
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), expr); err != nil {
		return "", false, false
	}
	stmt := "_ = " + b.String()
	if _, isCall := expr.(*ast.CallExpr); isCall {
		stmt = b.String()
	}
	bare = !usesSomething(expr)
	body := fmt.Sprintf("package p\n\nfunc _() {\n//line %s:%d\n%s\n}\n", absFile, s.line, stmt)
	file, err := parser.ParseFile(token.NewFileSet(), "", body, 0)
	if err != nil {
		return "", false, false
	}
	return "package p\n\n" + importDecl(file, nil, imports) + body[len("package p\n"):], bare, true
}

// rootPackage returns the name of the first package of this module the
// expression selects from, or "".
func rootPackage(expr ast.Expr, imports map[string]string) string {
	pkg := ""
	ast.Inspect(expr, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && pkg == "" && sel.Sel.IsExported() {
			if id, ok := sel.X.(*ast.Ident); ok && strings.HasPrefix(imports[id.Name], modulePath) {
				pkg = id.Name
			}
		}
		return pkg == ""
	})
	return pkg
}

// qualify puts pkg before every exported name pkg declares that the
// expression uses on its own: RunOptions becomes workqueue.RunOptions.
// A composite literal's keys are field names and stay as they are.
func qualify(expr ast.Expr, pkg string, names map[string]bool) {
	keys := map[*ast.Ident]bool{}
	selected := map[*ast.Ident]bool{}
	ast.Inspect(expr, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				keys[id] = true
			}
		case *ast.SelectorExpr:
			selected[n.Sel] = true
		}
		return true
	})
	ast.Inspect(expr, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && names[id.Name] && !keys[id] && !selected[id] {
			id.Name = pkg + "." + id.Name
		}
		return true
	})
}

// usesSomething says whether an expression does more than name a thing:
// calls it, builds it, indexes it.
func usesSomething(expr ast.Expr) bool {
	uses := false
	ast.Inspect(expr, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.CallExpr, *ast.CompositeLit, *ast.IndexExpr, *ast.IndexListExpr, *ast.BinaryExpr, *ast.UnaryExpr:
			uses = true
		}
		return !uses
	})
	return uses
}

// moduleExports maps each package name of this module to the exported
// names its non-test files declare at top level.
func moduleExports(t *testing.T, imports map[string]string) map[string]map[string]bool {
	t.Helper()
	exports := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for name, importPath := range imports {
		if !strings.HasPrefix(importPath, modulePath) {
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")))
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a nested module's package
		}
		exports[name] = map[string]bool{}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() {
						exports[name][d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							exports[name][s.Name.Name] = s.Name.IsExported()
						case *ast.ValueSpec:
							for _, id := range s.Names {
								exports[name][id.Name] = id.IsExported()
							}
						}
					}
				}
			}
		}
	}
	return exports
}

// markdownSpans returns the inline code of README.md and docs/, outside
// fenced blocks.
func markdownSpans(t *testing.T) []inlineSpan {
	t.Helper()
	var spans []inlineSpan
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := fencePattern.ReplaceAllStringFunc(string(data), func(block string) string {
			return strings.Repeat("\n", strings.Count(block, "\n")) // keep the line numbers
		})
		spans = append(spans, spansOf(rel(file), 1, text)...)
	}
	return spans
}

// commentSpans returns the inline code of every non-test Go file's doc
// comments (a comment's backquotes, as in `deltafifo.ReplacePart`).
func commentSpans(t *testing.T) []inlineSpan {
	t.Helper()
	var spans []inlineSpan
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root {
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, g := range file.Comments {
			for _, c := range g.List {
				spans = append(spans, spansOf(rel(p), fset.Position(c.Pos()).Line, c.Text)...)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

// spansOf returns the backquoted spans of text, whose first line is
// firstLine of file.
func spansOf(file string, firstLine int, text string) []inlineSpan {
	var spans []inlineSpan
	for i, line := range strings.Split(text, "\n") {
		for _, m := range inlineCodePattern.FindAllString(line, -1) {
			spans = append(spans, inlineSpan{file: file, line: firstLine + i, text: strings.Trim(m, "`")})
		}
	}
	return spans
}
