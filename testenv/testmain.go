package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// shared is the control plane Main started for this test binary.
var shared *ControlPlane

// Main starts one control plane for a test package, runs its tests, stops
// the control plane and returns the exit code. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
//
// If the control plane cannot start (a binary is missing, say), no test
// runs and the package fails with the reason: an integration test is never
// silently skipped.
func Main(m *testing.M, opts Options) int {
	flag.Parse() // testing's flags (-v, -run) are parsed here, before m.Run
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*opts.startTimeout())
	cp, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: the local control plane did not start: %v\n", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testenv: control plane ready at %s in %v\n", cp.Addr(), time.Since(start).Round(time.Millisecond))
	}
	shared = cp
	code := m.Run()
	cp.Stop()
	return code
}

// Shared returns the control plane that Main started for this package.
// Tests that only create, read and watch objects use it, each in a
// Namespace of its own.
func Shared(t testing.TB) *ControlPlane {
	t.Helper()
	if shared == nil {
		t.Fatal("testenv.Shared: no control plane; call testenv.Main from this package's TestMain")
	}
	return shared
}

// Current returns the control plane Main started for this test binary,
// or nil if Main did not start one. Shared is the form for tests; this
// one is for Example functions, which have no *testing.T.
func Current() *ControlPlane { return shared }

// Private starts a control plane for one test and stops it at cleanup.
// Tests that restart the apiserver, compact etcd, turn the watch cache off
// or read the audit log use one, so they disturb nobody else.
func Private(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*opts.startTimeout())
	defer cancel()
	cp, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting a private control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	return cp
}
