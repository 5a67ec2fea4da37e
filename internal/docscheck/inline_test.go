package docscheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path"
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
// What it cannot know it leaves alone: a free name (ctx, q, n, T) is one
// the prose has in mind, so "undefined: ctx" is no error, and neither is
// a generic function whose type arguments would be inferred from such a
// name. A bare name (`sharedinformer.InformerFor`) is a reference, not a
// use: it must exist but need not be instantiated; a field or method
// named on its type (`workqueue.RunOptions.Gate`) is looked up on a value
// of that type, instantiated where its constraints allow. An exported
// name without a package (`RunOptions` in `workqueue.Run(ctx, q, r,
// RunOptions{Workers: n})`) belongs to the one package of this module
// that declares it; one built or called that none declares is an error.
//
// The nested modules' comments are read too, and a span there is checked
// when it names a package of this module; one naming a nested module's
// own package (bench's `scale.Start`) is not this module's to build.
//
// Not checked: a method chained on a call whose type depends on a free
// name (`workqueue.New(opts).AddAfter(k, d)`), a span that wraps onto a
// second line in markdown, and spans naming a nested module's packages.
func TestEveryInlineGoExpressionInTheDocsTypeChecks(t *testing.T) {
	imports := ownImports(importNames(t), nestedModules(t))
	api := moduleExports(t, imports)
	spans := append(markdownSpans(t), commentSpans(t)...)

	dir, abs := scratchPackageDir(t, "_inline")

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
		src, bare, ok := inlineFile(s, filepath.Join(abs, s.file), imports, api)
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
	out := goBuild(t, rel+"/names", rel+"/uses")
	var failures []string
	inNames := false
	for _, line := range strings.Split(out, "\n") {
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
func inlineFile(s inlineSpan, absFile string, imports map[string]string, api moduleAPI) (src string, bare, ok bool) {
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
	qualify(expr, pkg, api.names)
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), expr); err != nil {
		return "", false, false
	}
	stmt := "_ = " + b.String()
	if _, isCall := expr.(*ast.CallExpr); isCall {
		stmt = b.String()
	}
	bare = !usesSomething(expr)
	if typ, member, ok := typeMember(expr, pkg); ok && bare {
		// pkg.Type.Member names a field or method: check it on a value of
		// the type, instantiated with arguments that meet its constraints.
		if args, known := api.typeArgs[pkg][typ]; known {
			stmt, bare = fmt.Sprintf("var v %s.%s%s; _ = v.%s", pkg, typ, args, member), false
		}
	}
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

// qualify puts a package before every exported name the expression uses
// on its own: RunOptions becomes workqueue.RunOptions when the span's
// package, pkg, declares it, or another package of this module when only
// that one does. A name built or called (RunOptionz{...}, Fooo(x)) that
// no package declares is put in pkg, so that the compiler calls it
// undefined; any other is left free (a field, a type parameter). A
// composite literal's keys are field names and stay as they are.
func qualify(expr ast.Expr, pkg string, names map[string]map[string]bool) {
	keys := map[*ast.Ident]bool{}
	selected := map[*ast.Ident]bool{}
	used := map[*ast.Ident]bool{} // built or called
	ast.Inspect(expr, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				keys[id] = true
			}
		case *ast.SelectorExpr:
			selected[n.Sel] = true
		case *ast.CompositeLit:
			if id, ok := typeName(n.Type); ok {
				used[id] = true
			}
		case *ast.CallExpr:
			if id, ok := typeName(n.Fun); ok {
				used[id] = true
			}
		}
		return true
	})
	ast.Inspect(expr, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || !id.IsExported() || keys[id] || selected[id] {
			return true
		}
		switch owner := declaredBy(names, id.Name); {
		case names[pkg][id.Name]:
			id.Name = pkg + "." + id.Name
		case owner != "":
			id.Name = owner + "." + id.Name
		case used[id]:
			id.Name = pkg + "." + id.Name
		}
		return true
	})
}

// typeName returns the identifier that names a type or function, with or
// without type arguments: RunOptions, RunOptions[K].
func typeName(e ast.Expr) (*ast.Ident, bool) {
	switch e := e.(type) {
	case *ast.Ident:
		return e, true
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	}
	return nil, false
}

// declaredBy returns the one package of this module that declares name,
// or "" when none or several do.
func declaredBy(names map[string]map[string]bool, name string) string {
	owner := ""
	for pkg, declared := range names {
		if declared[name] {
			if owner != "" {
				return ""
			}
			owner = pkg
		}
	}
	return owner
}

// typeMember matches pkg.Type.Member and returns Type and Member.
func typeMember(expr ast.Expr, pkg string) (typ, member string, ok bool) {
	outer, ok := expr.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	inner, ok := outer.X.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	if id, ok := inner.X.(*ast.Ident); !ok || id.Name != pkg {
		return "", "", false
	}
	return inner.Sel.Name, outer.Sel.Name, true
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

// moduleAPI is what this module's packages declare, by package name.
type moduleAPI struct {
	// names are the exported names each declares at top level.
	names map[string]map[string]bool
	// typeArgs are, for each exported type whose type parameters all
	// have a constraint typeArgFor knows, the arguments that instantiate
	// it ("[string]"; "" for a type with none).
	typeArgs map[string]map[string]string
}

// typeArgFor gives a type argument that meets a constraint, or "".
var typeArgFor = map[string]string{
	"comparable":      "string",
	"any":             "int",
	"informer.Object": "*corev1.ConfigMap",
	"Object":          "*corev1.ConfigMap", // in package informer itself
}

// moduleExports reads the exported names and types of every package of
// this module (not nested modules) from its non-test files.
func moduleExports(t *testing.T, imports map[string]string) moduleAPI {
	t.Helper()
	api := moduleAPI{names: map[string]map[string]bool{}, typeArgs: map[string]map[string]string{}}
	fset := token.NewFileSet()
	for name, importPath := range imports {
		if !strings.HasPrefix(importPath, modulePath) || name != path.Base(importPath) && importPath != modulePath {
			continue // another module's, or an alias (si for sharedinformer)
		}
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")))
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a nested module's package
		}
		names, typeArgs := map[string]bool{}, map[string]string{}
		api.names[name], api.typeArgs[name] = names, typeArgs
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
						names[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							names[s.Name.Name] = s.Name.IsExported()
							if args, ok := instantiation(s.TypeParams); ok {
								typeArgs[s.Name.Name] = args
							}
						case *ast.ValueSpec:
							for _, id := range s.Names {
								names[id.Name] = id.IsExported()
							}
						}
					}
				}
			}
		}
	}
	return api
}

// instantiation returns the type arguments for a type's parameters, or
// false when a constraint is one typeArgFor does not know.
func instantiation(params *ast.FieldList) (string, bool) {
	if params == nil {
		return "", true
	}
	var args []string
	for _, field := range params.List {
		var b bytes.Buffer
		if err := printer.Fprint(&b, token.NewFileSet(), field.Type); err != nil {
			return "", false
		}
		arg, ok := typeArgFor[b.String()]
		if !ok {
			return "", false
		}
		for range field.Names {
			args = append(args, arg)
		}
	}
	return "[" + strings.Join(args, ", ") + "]", true
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
// comments (a comment's backquotes, as in `deltafifo.ReplacePart`), in
// this module and the nested ones.
func commentSpans(t *testing.T) []inlineSpan {
	t.Helper()
	var spans []inlineSpan
	fset := token.NewFileSet()
	walkFiles(t, true, goSources, func(p string) error {
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

// nestedModules returns the import paths of the modules nested in this
// one (bench, examples, …): each holds a go.mod of its own.
func nestedModules(t *testing.T) []string {
	t.Helper()
	var paths []string
	walkFiles(t, true, func(p string) bool { return filepath.Base(p) == "go.mod" }, func(p string) error {
		dir := filepath.ToSlash(mustRel(t, root, filepath.Dir(p)))
		if dir != "." {
			paths = append(paths, modulePath+"/"+dir)
		}
		return nil
	})
	return paths
}

// ownImports keeps the package names that import a package of this
// module, not of a module nested in it: an inline span naming `scale`
// (bench/scale) is not this module's to build.
func ownImports(imports map[string]string, nested []string) map[string]string {
	own := map[string]string{}
	for name, importPath := range imports {
		inNested := false
		for _, m := range nested {
			inNested = inNested || importPath == m || strings.HasPrefix(importPath, m+"/")
		}
		if !inNested {
			own[name] = importPath
		}
	}
	return own
}
