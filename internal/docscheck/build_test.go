package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scratchPackageDir makes a directory inside this package for generated
// Go files (its name starts with "_", so the go command's ./... and this
// package's walks skip it), removed when the test ends. abs is the
// module root's absolute path, which //line directives and go build's
// messages use.
func scratchPackageDir(t *testing.T, prefix string) (dir, abs string) {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(root, "internal", "docscheck"), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	abs, err = filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return dir, abs
}

// goBuild builds pkgs in the module root and returns the compiler's
// output, every error (-gcflags=-e reports all, not the first ten); a
// go command that could not run at all fails the test.
func goBuild(t *testing.T, pkgs ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build", "-gcflags=-e"}, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("go build did not run: %v", err)
	}
	return string(out)
}
