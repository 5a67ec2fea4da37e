// Package chaos holds no code, only tests: the proof that an informer loses
// nothing under the faults real clusters produce, and survives servers that
// misbehave. It reads as a list of guarantees (cd chaos && go test -v .:
// it is a module of its own).
//
// # Chaos convergence (chaos_test.go)
//
// A real etcd and kube-apiserver (testenv) run twice: once with the
// watch cache off, where compacting etcd turns a resumed WATCH into a real
// 410 Gone, and once with it on, where restarting the apiserver makes old
// resourceVersions "too old". On each, writers create, update and delete
// ConfigMaps at random, straight to the apiserver, while an informer and a
// small controller (a workqueue whose reconcile mirrors every "src-x" into a
// "copy-x") read and write through a fault proxy (testenv/faultproxy). At
// random times the harness cuts every connection, adds latency, refuses
// connections for a while, compacts etcd, and restarts the apiserver.
//
// When the writers stop and the faults end, the test waits for things to
// settle and then asserts:
//
//   - the informer's cache equals a fresh LIST: the same keys at the same
//     resourceVersions;
//   - every handler's view (what it was told, applied in order) equals that
//     LIST too, so each object a handler saw that is gone was delivered to it
//     as a delete, with its final state known or not; an object created and
//     deleted within one outage is never seen, and that is right;
//   - per key, the resourceVersions a handler saw never went backwards, every
//     update's old object is the state that handler last saw, and no handler
//     was told of an add for a key it held or of an update or delete for a key
//     it did not;
//   - the controller converged: every source has its copy, with its data, and
//     no copy outlives its source;
//   - no handler or reconcile panicked, and no goroutine of ours outlived the
//     run (go.uber.org/goleak).
//
// A summary line reports the faults injected, the relists they caused (the
// reflector's KindRelist trace events), the errors reported and the events
// delivered. The random choices come from a seed that the test logs; set
// LISTWATCH_CHAOS_SEED to replay them (the timing, and so the interleaving,
// still differs from run to run). The short run injects every kind of fault
// once, in an order the seed chooses, on each control plane, and stops
// with the last; LISTWATCH_SOAK=10m runs the same test for ten minutes,
// split between the two control planes, with faults chosen at random once
// each kind has run.
//
// # Hostile servers (hostile_test.go)
//
// Package reflector's own tests cover malformed JSON, lists of the wrong kind,
// ERROR events that are not 410, 429 with Retry-After and watches that end at
// once. The cases here go further, through a whole informer: oversized
// objects, a connection reset in the middle of a list page, a resourceVersion
// that goes backwards, and each of the reflector's hostile cases again seen by
// the informer's OnError. For each: a clear error, a request rate bounded by
// the backoff, no panic, and a cache that converges once the server behaves.
//
// # Fuzzing (fuzz_test.go)
//
// Arbitrary bytes served as a LIST body and as a WATCH stream to
// RESTListerWatcher must never panic, and whatever is accepted must be a
// well-formed ConfigMap. The seed corpora run as ordinary tests;
// cd chaos && go test -fuzz=FuzzListBody . runs the fuzzer.
//
// # Sharded replicas (replicas/)
//
// Package chaos/replicas checks the guarantees of package sharding the
// same way, with replica processes instead of one informer: a seeded
// schedule kills, pauses, partitions, joins and removes replicas,
// deletes their Leases and takes their permissions away, and the
// checker asserts that no two replicas reconciled one object at once,
// that every object ends owned by one live replica in bounded time, and
// that nothing was lost. make chaos-replicas runs it over many seeds.
package chaos
