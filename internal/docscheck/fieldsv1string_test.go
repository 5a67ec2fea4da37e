package docscheck

import (
	"os"
	"os/exec"
	"testing"
)

// TestTheModuleBuildsWithApimachinerysFieldsV1StringRepresentation proves
// that the module builds with the build tag k8s.io/apimachinery v0.37
// offers for metav1.FieldsV1 (fieldsv1string: the field set held as a
// unique.Handle[string], interned by apimachinery itself, with no Raw
// field). Before the interner (5f1c5ac) every package built with it; the
// interner reads and compares FieldsV1.Raw directly (intern.go, fieldSet),
// so sharedinformer, and everything built on it, no longer compiles
// there. Passing means the interner reaches a field set's bytes through
// FieldsV1's methods (GetRawReader, GetRawString, Equal), or leaves field
// sets to apimachinery under that tag.
func TestTheModuleBuildsWithApimachinerysFieldsV1StringRepresentation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module")
	}
	cmd := exec.Command("go", "build", "-tags", "fieldsv1string", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("go build did not run: %v", err)
	}
	if err != nil {
		t.Fatalf("go build -tags fieldsv1string ./... failed:\n%s", out)
	}
}
