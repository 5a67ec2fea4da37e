package docscheck

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A doc comment's code block is one of three things:
//
//   - a diagram, drawn with box-drawing characters and arrows;
//   - a shell command (go run, make, kubectl, ...);
//   - Go, which must compile.
//
// Go that does not even parse is neither of the first two, so it fails
// the test rather than passing for prose; notGo lists the few blocks that
// are meant to be read, not compiled, with the reason.
var notGo = map[string]string{
	"expectations/doc.go: reconcile(owner):": "pseudo-code: the shape of a reconcile, with the steps in words",
	"reflector/doc.go: Reflector.Run              Reflector.Run / RunWithContext (its loop: ListAndWatchWithContext)": "a two-column glossary",
	"testenv/doc.go: etcd            127.0.0.1:<random>  data, log in a temp dir":                                     "a table of the processes Start runs",
	"trace.go: reflector  watch-event  default/cm-1  rv=1042  ADDED":                                                  "a line of a trace printer's output",
	"leaderelection/elector.go: acquiring: try every RetryPeriod (plus jitter) until the Lease is":                    "the elector's states, in words",
}

// givens declares, for a Go block that uses names it does not declare
// itself (a ctx, a config, the object at hand), those names and their
// types, as a parameter list. The key is the file and the block's first
// line.
var givens = map[string]string{
	"deltafifo/doc.go: cache, err := indexer.New(indexer.Options[*corev1.Pod]{})":                                    "ctx context.Context, pods []*corev1.Pod, pod *corev1.Pod, listRV string",
	"fakeapiserver/doc.go: synctest.Test(t, func(t *testing.T) {":                                                    "t *testing.T, inject fakeapiserver.Injector, opts sharedinformer.FactoryOptions",
	"indexer/doc.go: idx, err := indexer.New(indexer.Options[*corev1.Pod]{":                                          "pod *corev1.Pod",
	"leaderelection/doc.go: client, err := leaderelection.NewClient(restConfig) // a client of its own: its own QPS": "ctx context.Context, restConfig *rest.Config, runController func(context.Context)",
	"lister/doc.go: pods, err := lister.New(idx, corev1.Resource(\"pods\"))":                                         "idx *indexer.Indexer[*corev1.Pod]",
	"memlistwatch/doc.go: lw := memlistwatch.New[*corev1.ConfigMap]()":                                               "ctx context.Context, cm *corev1.ConfigMap, store reflector.Store[*corev1.ConfigMap], key informer.Key",
	"metrics/doc.go: reg, err := metrics.NewRegistry(myPrometheusAdapter)":                                           "ctx context.Context, cfg *rest.Config, myPrometheusAdapter metrics.Provider",
	"reflector/doc.go: lw, err := reflector.NewTypedListerWatcher[*corev1.Pod](cfg, scheme, reflector.Source{":       "ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, fifo *deltafifo.DeltaFIFO[*corev1.Pod]",
	"readyourwrites/doc.go: guard, err := readyourwrites.New(readyourwrites.Options{Name: \"secrets\"})": "ctx context.Context, secretInformer *sharedinformer.Informer[*corev1.Secret], " +
		"client *rest.RESTClient, queue *workqueue.Queue[informer.Key]",
	"reflector/restclients.go: scheme := runtime.NewScheme()": "cfg *rest.Config",
	"sharding/doc.go: leases, err := leaderelection.NewClient(cfg)": "ctx context.Context, cfg *rest.Config, podName string, queue *workqueue.Queue[informer.Key], " +
		"lister *lister.Lister[*corev1.ConfigMap], client *rest.RESTClient, reconcile workqueue.ReconcileFunc[informer.Key], opts workqueue.RunOptions[informer.Key]",
	"events/doc.go: recorder, err := events.New(cfg, events.Options{Controller: \"example.com/secret-copier\", Scheme: scheme})": "ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, cm *corev1.ConfigMap, key informer.Key",
	"ownership/doc.go: mark, err := ownership.New(\"secret-copier\")":                                                            "ctx context.Context, factory *sharedinformer.Factory, queue *workqueue.Queue[informer.Key]",
	"sharedinformer/doc.go: factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})":       "ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, queue *workqueue.Queue[informer.Key]",
	"sharedinformer/enqueue.go: reg, err := configMaps.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue))":     "configMaps *sharedinformer.Informer[*corev1.ConfigMap], queue *workqueue.Queue[informer.Key]",
	"sharedinformer/factory.go: cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory,":                         "ctx context.Context, factory *sharedinformer.Factory",
	"simulation/doc.go: res := simulation.Check(t, simulation.Options{Seed: seed, Scenario: simulation.LeaderElected, Label: \"app=demo\",": "t *testing.T, seed int64, " +
		"control func(context.Context, *rest.Config, string, informer.TraceHook) error, secretsMatchConfigMaps func(context.Context, *rest.Config) error",
	"testenv/faultproxy/doc.go: p, err := faultproxy.Start(cp.Addr())":                                       "cp *testenv.ControlPlane",
	"workqueue/doc.go: q := workqueue.New(workqueue.Options[informer.Key]{}) // client-go's default backoff": "ctx context.Context, key informer.Key, reconcile workqueue.ReconcileFunc[informer.Key]",
	"workqueue/doc.go: key, err := q.Get(ctx) // blocks; ErrShutDown or ctx.Err() ends the loop": "ctx context.Context, q *workqueue.Queue[informer.Key], " +
		"reconcile workqueue.ReconcileFunc[informer.Key], isTerminal func(error) bool",
	"workqueue/exported.go: qm, err := workqueue.NewExportedMetrics(registry, \"configmaps\", nil)": "ctx context.Context, registry *metrics.Registry",
}

// diagramRunes mark a block as a diagram.
const diagramRunes = "─│▶◀▲▼┐┘┌└├┤→"

// commandWords start every line of a shell command block.
var commandWords = []string{"go", "make", "kubectl", "export", "curl", "cd", "controlplane", "kind"}

// A codeBlock is one code block of a doc comment: the file it is in
// (relative to root), the line it starts on, and its text.
type codeBlock struct {
	file string
	line int
	text string
}

func (b codeBlock) key() string {
	first, _, _ := strings.Cut(b.text, "\n")
	return b.file + ": " + first
}

// TestEveryGoSnippetInADocCommentCompiles finds the code blocks in every
// package doc and in the doc comment of every exported declaration of this
// module (what `go doc` shows), and compiles each block that is Go: a
// block of statements as the body of a function whose parameters are its
// givens, a block of declarations as a file. The imports are found from
// the package names the block uses. Only "declared and not used" is
// forgiven, since a snippet shows a value being made, not used. Any other
// compile error fails the test, reported at the line of the doc comment.
func TestEveryGoSnippetInADocCommentCompiles(t *testing.T) {
	blocks := docCodeBlocks(t)
	imports := importNames(t)

	dir, abs := scratchPackageDir(t, "_snippets")

	byFile := map[string][]codeBlock{}
	seenNotGo := map[string]bool{}
	for _, b := range blocks {
		switch {
		case strings.ContainsAny(b.text, diagramRunes), isCommand(b.text):
			continue
		case notGo[b.key()] != "":
			seenNotGo[b.key()] = true
			continue
		}
		byFile[b.file] = append(byFile[b.file], b)
	}
	for key := range notGo {
		if !seenNotGo[key] {
			t.Errorf("notGo lists %q, which is no longer a code block: remove it", key)
		}
	}

	var pkgs []string
	seenGivens := map[string]bool{}
	n := 0
	for _, fileBlocks := range byFile {
		n++
		pkgDir := filepath.Join(dir, fmt.Sprintf("p%d", n))
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		written := 0
		for i, b := range fileBlocks {
			seenGivens[b.key()] = true
			src, err := snippetFile(b, filepath.Join(abs, b.file), givens[b.key()], imports)
			if err != nil {
				t.Errorf("%s:%d: a code block that is neither Go that parses, nor a diagram, nor a shell command: fix it, or list it in notGo with the reason (%v)", b.file, b.line, err)
				continue
			}
			if err := os.WriteFile(filepath.Join(pkgDir, fmt.Sprintf("s%d.go", i)), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			written++
		}
		if written > 0 {
			pkgs = append(pkgs, "./"+filepath.ToSlash(mustRel(t, root, pkgDir)))
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("no Go code block found in any doc comment: the walk is broken")
	}
	for key := range givens {
		if !seenGivens[key] {
			t.Errorf("givens has an entry for %q, which no Go code block starts with: update or remove it", key)
		}
	}

	out := goBuild(t, pkgs...)
	var failures []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "", strings.HasPrefix(line, "# "), strings.Contains(line, "declared and not used"):
			continue
		}
		failures = append(failures, strings.ReplaceAll(line, abs+string(filepath.Separator), ""))
	}
	if len(failures) > 0 {
		t.Errorf("Go code blocks in doc comments do not compile (a name the block does not declare needs an entry in givens):\n%s", strings.Join(failures, "\n"))
	}
}

// docCodeBlocks returns the code blocks of the package docs and exported
// declarations' docs of every non-test Go file of this module (nested
// modules, which have their own go.mod, are theirs to check).
func docCodeBlocks(t *testing.T) []codeBlock {
	t.Helper()
	var blocks []codeBlock
	fset := token.NewFileSet()
	walkFiles(t, false, goSources, func(p string) error {
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, g := range exportedDocs(file) {
			blocks = append(blocks, codeBlocks(fset, rel(p), g)...)
		}
		return nil
	})
	return blocks
}

// skipDir says whether a walk of the module skips a directory: build
// output, the tools cache, hidden directories and those the go command
// ignores (_snippets, testdata).
func skipDir(name string) bool {
	return name == "bin" || name == "tools" || name == "testdata" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// exportedDocs returns a file's package doc and the doc comments of its
// exported declarations.
func exportedDocs(file *ast.File) []*ast.CommentGroup {
	var groups []*ast.CommentGroup
	add := func(name *ast.Ident, g *ast.CommentGroup) {
		if g != nil && (name == nil || name.IsExported()) {
			groups = append(groups, g)
		}
	}
	add(nil, file.Doc)
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || exportedReceiver(d.Recv) {
				add(d.Name, d.Doc)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					add(s.Name, s.Doc)
					if len(d.Specs) == 1 {
						add(s.Name, d.Doc)
					}
				case *ast.ValueSpec:
					if slices.ContainsFunc(s.Names, (*ast.Ident).IsExported) {
						add(nil, s.Doc)
						add(nil, d.Doc)
					}
				}
			}
		}
	}
	slices.SortFunc(groups, func(a, b *ast.CommentGroup) int { return int(a.Pos() - b.Pos()) })
	return slices.Compact(groups)
}

// codeBlocks returns g's code blocks, each with the line of g on which it
// starts.
func codeBlocks(fset *token.FileSet, file string, g *ast.CommentGroup) []codeBlock {
	var blocks []codeBlock
	var p comment.Parser
	next := 0 // the first comment line not yet matched to a block
	for _, b := range p.Parse(g.Text()).Content {
		code, ok := b.(*comment.Code)
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(code.Text, "\n")
		line := fset.Position(g.Pos()).Line
		for i := next; i < len(g.List); i++ {
			text := strings.TrimPrefix(g.List[i].Text, "//")
			if strings.TrimSpace(text) != "" && strings.HasSuffix(text, first) {
				line, next = fset.Position(g.List[i].Pos()).Line, i+1
				break
			}
		}
		blocks = append(blocks, codeBlock{file: file, line: line, text: code.Text})
	}
	return blocks
}

// isCommand says whether every line of text is a shell command or a
// comment.
func isCommand(text string) bool {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		word, _, _ := strings.Cut(line, " ")
		if line != "" && !strings.HasPrefix(line, "#") && !slices.Contains(commandWords, word) {
			return false
		}
	}
	return true
}

// snippetFile turns one Go block into a Go file of package p: a file of
// declarations as it is, a block of statements as the body of a function
// with params (its givens) as parameters. A //line comment makes the
// compiler report errors at the block's lines in the doc comment.
func snippetFile(b codeBlock, absFile, params string, imports map[string]string) (string, error) {
	fset := token.NewFileSet()
	lineDirective := fmt.Sprintf("\n//line %s:%d\n", absFile, b.line)
	file, declErr := parser.ParseFile(fset, "", "package p\n"+b.text, 0)
	if declErr == nil && len(file.Decls) > 0 {
		return "package p\n\n" + importDecl(file, nil, imports) + lineDirective + b.text, nil
	}
	result := " error"
	body := b.text + "\nreturn nil\n"
	src := "package p\nfunc _(" + params + ")" + result + " {\n" + b.text + "\n}\n"
	file, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		if strings.HasPrefix(b.text, "func ") || strings.HasPrefix(b.text, "type ") {
			return "", declErr // it was meant as declarations
		}
		return "", err
	}
	if hasBareReturn(file) {
		result, body = "", b.text+"\n"
	}
	var paramNames []string
	for _, f := range file.Decls[0].(*ast.FuncDecl).Type.Params.List {
		for _, name := range f.Names {
			paramNames = append(paramNames, name.Name)
		}
	}
	return "package p\n\n" + importDecl(file, paramNames, imports) +
		"\nfunc _(" + params + ")" + result + " {" + lineDirective + body + "}\n", nil
}

// hasBareReturn says whether the function's own body (not a function
// literal in it) returns with no value.
func hasBareReturn(file *ast.File) bool {
	bare := false
	ast.Inspect(file.Decls[0].(*ast.FuncDecl).Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			bare = bare || len(n.Results) == 0
		}
		return true
	})
	return bare
}

// importDecl imports every package the file refers to by name (X in X.Y),
// except names the file or its parameters declare. A name that is no
// package this repository imports is left alone: the compiler will call
// it undefined.
func importDecl(file *ast.File, params []string, imports map[string]string) string {
	declared := map[string]bool{}
	for _, p := range params {
		declared[p] = true
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					declared[id.Name] = true
				}
			}
		}
		return true
	})
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && !declared[id.Name] {
				used[id.Name] = true
			}
		}
		return true
	})
	// A parameter's type is resolved outside the function, so a given
	// may share its package's name: lister *lister.Lister[T].
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "_" {
			ast.Inspect(fn.Type.Params, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						used[id.Name] = true
					}
				}
				return true
			})
		}
	}
	var lines []string
	for name := range used {
		if importPath, ok := imports[name]; ok {
			lines = append(lines, fmt.Sprintf("\t%s %q\n", name, importPath))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	slices.Sort(lines)
	return "import (\n" + strings.Join(lines, "") + ")\n"
}

// importNames maps each package name this module's Go files use to the
// import path it most often names: corev1 to k8s.io/api/core/v1, runtime
// to k8s.io/apimachinery/pkg/runtime, indexer to this module's indexer.
func importNames(t *testing.T) map[string]string {
	t.Helper()
	counts := map[string]map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range file.Imports {
			importPath, _ := strconv.Unquote(spec.Path.Value)
			name := path.Base(importPath)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name == "_" || name == "." {
				continue
			}
			if counts[name] == nil {
				counts[name] = map[string]int{}
			}
			counts[name][importPath]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for name, paths := range counts {
		best := 0
		for p, n := range paths {
			if n > best || n == best && p < names[name] {
				names[name], best = p, n
			}
		}
	}
	return names
}

func mustRel(t *testing.T, base, target string) string {
	t.Helper()
	r, err := filepath.Rel(base, target)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
