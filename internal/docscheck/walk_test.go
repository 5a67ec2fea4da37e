package docscheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkFiles calls visit for every file under the root whose path keep
// accepts, skipping build output and hidden directories (skipDir) and,
// unless nested is true, the nested modules (a directory with a go.mod of
// its own). An error from visit ends the walk and fails the test.
func walkFiles(t *testing.T, nested bool, keep func(path string) bool, visit func(path string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && !nested {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(p) {
			return nil
		}
		return visit(p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goSources keeps the non-test Go files; goTests the test files.
func goSources(p string) bool {
	return strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")
}
func goTests(p string) bool { return strings.HasSuffix(p, "_test.go") }
