// Package informer is the root of listwatch/informer, a from-scratch,
// readable rebuild of the Kubernetes informer machinery: the pieces that
// client-go calls Reflector, DeltaFIFO, Indexer, Lister, SharedInformer and
// workqueue.
//
// # The data flow
//
// One change made on the API server travels through these stages, each a
// package of this module:
//
//	kube-apiserver ──LIST, then WATCH from its resourceVersion──▶ reflector
//	reflector ──Add / Update / Delete / Replace(list, rv)──▶ deltafifo
//	deltafifo ──Pop(Deltas)──▶ sharedinformer (one goroutine):
//	      1. update the indexer (the cache)   2. then notify every listener
//	listener (one buffered goroutine per handler) ──OnAdd / OnUpdate / OnDelete──▶ your handler
//	your handler ──Add(key)──▶ workqueue ──Get / Done──▶ N workers ──▶ reconcile(key)
//	reconcile reads through a lister (the cache, never the API) and writes to the API
//
// The LIST is one consistent, unpaged response for an informer from
// sharedinformer.InformerFor (the Factory, the front door), and pages of
// 500 for one built from the parts with reflector.New or
// sharedinformer.New; reflector.Tuning.PageSize chooses either way.
//
// This package holds only what every stage shares:
//
//   - [Object], the constraint on the objects the generic types hold
//     (*corev1.Pod, *unstructured.Unstructured, ...), and [IsNil];
//   - [Key], the "namespace/name" identity by which every stage refers to an
//     object, with [KeyOf], [KeyFor] and [ParseKey];
//   - [TraceEvent], [TraceHook], [Stage] and [Tee], the one way every stage
//     reports what it does, so a learner can watch a single change travel
//     from the watch stream to a worker;
//   - [Clock], [Timer], [RealClock], [Sleep] and [WithTimeout], the time
//     every stage waits on, so tests can run it on a fake clock.
//
// It imports nothing else from this module but an internal helper; every
// package of the data flow imports it.
//
// # Where to start reading
//
// Read this page, then the packages in the order the data flows:
//
//  1. reflector: LIST, then WATCH from the list's resourceVersion; relist
//     on 410 Gone; back off on errors. memlistwatch is an in-memory API
//     server to try it on.
//  2. deltafifo: per-key queues of changes; a relist's missing keys become
//     deletes whose final state is unknown.
//  3. indexer and lister: the cache and its read-only views.
//  4. sharedinformer: the three above under one Run, fanned out to any
//     number of handlers, each on its own goroutine.
//  5. workqueue: where handlers put keys and workers take them.
//  6. readyourwrites: how a controller avoids acting on a cache that has
//     not caught up with its own writes (expectations is the older,
//     narrower way: counts of in-flight creates and deletes).
//  7. leaderelection: several replicas of one controller, one active, over
//     a coordination.k8s.io Lease.
//  8. sharding: every replica active, each owning part of the objects
//     (shard Leases, a hash ring, a label per object).
//
// # Conventions
//
// Bad input is an error that names what is wrong, never a panic: every
// constructor whose arguments can be wrong (indexer.New, lister.New,
// deltafifo.New, reflector.New, sharedinformer.New,
// workqueue.NewBucketRateLimiter, metrics.ExponentialBuckets, ...) checks
// them and returns an error, so a configuration mistake fails where the
// thing is built. workqueue.New returns no error because no value of its
// Options is wrong: a nil field, or a nil pointer in one, means the
// default. (A test double's misuse, such as FakeClock.Step with a negative
// duration, still panics: that is a bug in the test.) Anything
// that blocks takes a context.Context first and returns when it ends; each
// runnable thing has one Run(ctx).
//
// Around the flow:
//
//   - kubeconfig finds the cluster as kubectl does (--kubeconfig,
//     $KUBECONFIG, ~/.kube/config, in-cluster, --context).
//   - metrics exports what the trace hook reports as the metrics
//     client-go's users scrape (workqueue_*, informer_*), through a small
//     Provider interface a Prometheus adapter implements.
//   - testenv starts a real etcd and kube-apiserver on this machine, so
//     what the packages claim of the API server is tested against the
//     real thing (and fakeapiserver, on which most tests run, is checked
//     against it by its conformance test); your
//     own tests can use it too (cmd/controlplane builds its binaries), and
//     testenv/faultproxy puts network faults in front of it.
//   - simulation runs whole replica sets of a controller on fakeapiserver,
//     on simulated time, under fault schedules drawn from a seed, and
//     checks what leader election and sharding promise.
//   - events records Events (what kubectl describe shows) beside a
//     reconcile's writes, and ownership marks the children, in another
//     namespace, that an owner reference cannot reach.
//
// The runnable examples, the benchmarks against client-go and the chaos
// tests are nested modules of the repository (examples/, bench/, chaos/),
// so nothing they depend on reaches a module that imports this one.
package informer
