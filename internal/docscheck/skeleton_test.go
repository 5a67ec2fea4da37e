package docscheck

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxSkeletonLines is the promise chapter 8 makes: a whole controller,
// every error checked, in about 170 gofmt'd lines. It was 105
// until control was split from run, with a trace hook for the
// simulator's test (nine lines), and ownerGone was added (seven); the
// event recorder, its goroutine and the Event of a refusal added six;
// newFactory, the seam the mutation-detector test replaces, three;
// reporting a Secret made immutable (an Event, the key given up), four;
// looking up a gone Secret's other owners, as a garbage collector does,
// twenty-three; requeueing a ConfigMap whose unlabelled Secret was
// deleted, four; taking an owner whose name no ConfigMap can have as
// gone, four; waiting for a Secret already being deleted, two.
const maxSkeletonLines = 166

// TestChapter8OpensWithTheWholeSkeletonProgram checks that the first Go
// block of chapter 8 is examples/skeleton/main.go, byte for byte, that it
// is gofmt'd, and that it keeps the promise on its length. The program's
// own test runs it against the real control plane.
func TestChapter8OpensWithTheWholeSkeletonProgram(t *testing.T) {
	chapter, err := os.ReadFile(filepath.Join(root, "docs", "08-writing-a-controller.md"))
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join(root, "examples", "skeleton", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := snippetPattern.FindSubmatch(chapter)
	if m == nil {
		t.Fatal("chapter 8 has no Go block")
	}
	if !bytes.Equal(m[1], program) {
		t.Fatal("chapter 8's first Go block is not examples/skeleton/main.go: copy the file into the chapter again")
	}
	formatted, err := format.Source(program)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(formatted, program) {
		t.Error("examples/skeleton/main.go is not gofmt'd")
	}
	if n := strings.Count(string(program), "\n"); n > maxSkeletonLines {
		t.Errorf("the skeleton has %d lines; chapter 8 promises at most %d", n, maxSkeletonLines)
	}
}
