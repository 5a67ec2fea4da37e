// Package testenv runs a real Kubernetes control plane, etcd and
// kube-apiserver, on this machine for tests, examples and benchmarks. It
// needs no Docker and no kind: the two binaries are built from pinned Go
// modules (the go.mod and go.sum files in pins/) and cached.
//
// Everything this library teaches is checked against it, because a test
// against a hand-written fake only proves what the fake does. Your own
// module's tests can use it the same way.
//
// # Getting the binaries
//
// Once per machine, from your module (or `make tools` in this repository):
//
//	go run github.com/listwatch/informer/cmd/controlplane build
//
// It builds the versions pinned by the release of this module that your
// go.mod requires, into $XDG_CACHE_HOME/listwatch-informer/tools (or
// ~/.cache/...; see ToolsCacheEnv), which is where Start looks, whatever
// the working directory. The first build takes about 7 minutes on a quiet
// 2-core machine (up to 30 on a busy one) and downloads about 1 GB of
// modules; later calls return at once.
//
// # Cost
//
// One control plane holds about 300 MB of memory while idle (its API
// server alone peaked at about 3.6 GiB while an informer synced 100,000
// ConfigMaps of 1 KiB with the watch cache on: docs/17-at-scale/results.md)
// and two processes. `go test
// ./...` runs test packages in parallel, up to GOMAXPROCS at once, and each
// package that calls Main starts its own: on a small machine run
// `go test -p 1` or share one package's control plane between tests.
//
// # What runs
//
//	etcd            127.0.0.1:<random>  data, log in a temp dir
//	kube-apiserver  127.0.0.1:<random>  serving cert generated at start,
//	                                    static admin token (and one per
//	                                    Options.Users), AlwaysAllow (or RBAC)
//
// There is no controller-manager, scheduler or kubelet. So: Pods are
// accepted (the ServiceAccount admission plugin is off) but never run;
// deleted namespaces stay Terminating; owner references never garbage-
// collect. Tests use a fresh namespace each (ControlPlane.Namespace).
//
// # Usage
//
// Most test packages share one control plane, started by TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
//
//	func TestSomething(t *testing.T) {
//		cp := testenv.Shared(t)
//		ns := cp.Namespace(t)
//		client, _ := testenv.CoreV1Client(cp.Config())
//		// ... your test, in namespace ns
//	}
//
// A test that restarts the apiserver, compacts etcd, turns the watch cache
// off or reads the audit log starts its own with Private, so it disturbs
// no other test.
//
// Also at hand: Options.RBAC with Options.Users and ConfigAs, for a client
// that is not the admin (a 403 to provoke), and Grant, to give it a Role
// of rules to prove minimal;
// InstallCRD, for a custom resource served in one call; and Current, the
// control plane Main started, for Example functions, which have no
// *testing.T; and SaveEtcdData with Options.EtcdDataFrom, to populate
// 100k objects once and start later control planes on a copy (the scale
// ladder, bench/scale, does); and Options.FeatureGates, for an alpha
// feature such as CBORServingAndStorage (custom resources served in
// CBOR, TestCBORServingAndStorageGateMakesTheServerAnswerCBOR).
//
// # Faults
//
//   - Compact: etcd forgets old revisions; with Options.DisableWatchCache a
//     WATCH from before the compaction answers 410 Gone (reason Expired).
//   - Restart: the apiserver stops and starts on the same port, data kept;
//     open watches end; with the watch cache on, old resourceVersions are
//     "too old" afterwards.
//   - Network faults: put testenv/faultproxy in front (Proxy, ConfigVia).
//
// # What kube-apiserver does (checked)
//
// Facts this library depends on, each checked by fakeapiserver's
// differential conformance test (fakeapiserver/conformance_scripts_test.go)
// against the control plane Main starts (watch cache on) and a private one
// with DisableWatchCache:
//
//   - With the watch cache on, compaction gives no 410: only with the
//     cache off does a WATCH from before it end in an ERROR event (410,
//     reason Expired, "The resourceVersion for the provided watch is too
//     old."), a continue token from before it answer 410 with a new token
//     that goes on from the latest state, and an exact or paged LIST at an
//     old resourceVersion answer 410. The shared control plane runs with
//     the cache on.
//   - A PUT to a missing Lease creates it (201), whatever resourceVersion
//     the body carries; a uid in the body is a precondition, and a
//     missing object fails it (409 Conflict). ConfigMaps and custom
//     resources answer 404 instead, and a custom resource's PUT without a
//     resourceVersion is 422.
//   - An update that changes nothing keeps the resourceVersion and sends
//     no event. DELETE answers a Status, for custom resources too.
//   - The watch cache sends a bookmark 2 s before timeoutSeconds (one or
//     two: it looks every second) only if its resourceVersion has moved
//     past the watch's starting one; with the cache on, a WATCH without a
//     resourceVersion that allows bookmarks also gets an
//     initial-events-end bookmark.
//   - A CRD's resource answers before discovery lists it; deleting the
//     CRD sends a DELETED event per object, then ends the watch; moving
//     it to another version ends the old version's watches. A path no
//     longer served answers a plain-text 404, not a Status.
//
// # Invariants
//
// The processes never outlive the process that started them: Stop ends
// them, and on Linux the kernel kills them if the test binary dies first.
// When a binary is missing, Start fails with a *MissingBinaryError that
// names it and the command that builds it; integration tests never skip.
// Proved by TestStopEndsBothProcessesAndIsIdempotent,
// TestControlPlaneDiesWithAKilledTestBinaryAndLeavesNoFiles,
// TestStartWithoutBinariesNamesTheMissingOneAndTheBuildCommand and
// TestAPackageWhoseControlPlaneCannotStartFailsAndSkipsNothing.
package testenv
