package docscheck

import (
	"os"
	"os/exec"
	"testing"
)

// TestTheModuleAndItsTestsCompileWithApimachinerysFieldsV1StringRepresentation
// proves that the module, its tests included, compiles under the build
// tag k8s.io/apimachinery v0.37 offers for metav1.FieldsV1
// (fieldsv1string: the field set held as an interned string, with no Raw
// field), so that the informer's interner can be built and tested there.
// Two reviews found it not so: the interner read FieldsV1.Raw (the module
// did not build), then its tests did (none of them could run under the
// tag). go vet type-checks every package and its tests. It never skips:
// a few seconds with a warm build cache, and no environment it could lack
// (the go command runs it).
func TestTheModuleAndItsTestsCompileWithApimachinerysFieldsV1StringRepresentation(t *testing.T) {
	cmd := exec.Command("go", "vet", "-tags", "fieldsv1string", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("go vet did not run: %v", err)
	}
	if err != nil {
		t.Fatalf("go vet -tags fieldsv1string ./... failed:\n%s", out)
	}
}
