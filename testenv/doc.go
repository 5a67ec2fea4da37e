// Package testenv runs a real Kubernetes control plane, etcd and
// kube-apiserver, on this machine for tests, examples and benchmarks. It
// needs no Docker and no kind: the two binaries are built from pinned Go
// modules by hack/build-tools.sh (`make tools`) and linked into bin/.
//
// Everything this module teaches is checked against it, because a test
// against a hand-written fake only proves what the fake does.
//
// # What runs
//
//	etcd            127.0.0.1:<random>  data, log in a temp dir
//	kube-apiserver  127.0.0.1:<random>  serving cert generated at start,
//	                                    static admin token, AlwaysAllow (or RBAC)
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
//		...
//	}
//
// A test that restarts the apiserver, compacts etcd, turns the watch cache
// off or reads the audit log starts its own with Private, so it disturbs
// no other test.
//
// # Faults
//
//   - Compact: etcd forgets old revisions; with Options.DisableWatchCache a
//     WATCH from before the compaction answers 410 Gone (reason Expired).
//   - Restart: the apiserver stops and starts on the same port, data kept;
//     open watches end; with the watch cache on, old resourceVersions are
//     "too old" afterwards.
//   - Network faults: put testenv/faultproxy in front (ConfigVia).
//
// # Invariants
//
// The processes never outlive the process that started them: Stop ends
// them, and on Linux the kernel kills them if the test binary dies first.
// When a binary is missing, Start fails with an error that names it and
// the command that builds it; integration tests never skip.
package testenv
