// Package fakeapiserver is a fake kube-apiserver: an http.Handler, in
// process, that serves the requests this library makes with the
// semantics it depends on, so whole controllers (informers, leader
// election, sharding) can run against it inside a testing/synctest
// bubble, on simulated time, over an in-memory network.
//
// A fake is only as good as its agreement with the real thing: every
// behaviour listed below is checked against a real kube-apiserver by this
// package's differential conformance test (conformance_test.go), which
// runs the same scripted requests against both and compares the answers.
// A difference is a bug in the fake.
//
// # Where it sits
//
//	your test ──Compact, CutWatches, InstallCRD/RemoveCRD/MoveCRD──▶ Server
//	clients (reflector, elector, ...) ──HTTP──▶ InMemory ──▶ WithFaults ──▶ Server
//
// Its little sibling memlistwatch is a ListerWatcher for one collection,
// for examples and unit tests of the reflector; this one is a whole
// server that real clients (client-go's rest package, discovery) talk to.
//
// # Usage
//
//	synctest.Test(t, func(t *testing.T) {
//		srv := fakeapiserver.New()
//		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, inject))
//		defer mem.Close()
//		factory, _ := sharedinformer.NewFactory(mem.Config(), opts)
//		// ... run, write, srv.Compact(srv.ResourceVersion()), srv.CutWatches()
//		synctest.Wait() // every goroutine idle: compare caches with srv.Objects
//	})
//
// # What it models
//
//   - resourceVersions: one counter for every object of every resource
//     (etcd's revision); each write takes the next.
//   - resources: BuiltIns (namespaces, configmaps, secrets, pods,
//     services, leases), namespaced and cluster-scoped; custom resources
//     installed, removed (their objects deleted first, with DELETED
//     events) and moved to another version at runtime.
//   - GET; LIST with limit and continue (410 Expired for a token older
//     than the compaction); label selectors; field selectors on
//     metadata.name and metadata.namespace; the resourceVersion and
//     resourceVersionMatch rules of an etcd-backed list.
//   - WATCH: from a resourceVersion (one not yet reached: the writes
//     after it), or "0"/"" with synthetic ADDED
//     events (none with sendInitialEvents=false); 410 after compaction, and from before a custom resource's
//     latest InstallCRD or MoveCRD (its watch cache starts afresh then,
//     past the CRD's own write, as kube-apiserver's does); bookmarks; the streamed initial list
//     (sendInitialEvents) with its initial-events-end bookmark;
//     timeoutSeconds; selector transitions as ADDED/DELETED.
//   - writes: POST (409 AlreadyExists; the namespace must exist; 405
//     at a namespaced built-in's all-namespaces path, a plain 404 at a
//     custom resource's; a custom resource's POST to an object's path
//     creates the body's object, its PUT or PATCH of the collection is
//     400, a PATCH of a type it does not take 415 first; generateName (a
//     taken name generated again, from kube's alphabet), itself valid
//     as a name's prefix on every create and on an update of a
//     ConfigMap, a Secret, a Namespace or a Pod (on another's update,
//     only no '/' or '%'); a name valid for its resource; a create's
//     generation not negative (a Pod's 1, one more with each change of
//     its spec; another built-in's kept as sent); a Pod's, a
//     Service's and a Namespace's status, and a Namespace's
//     spec.finalizers, kept as stored on an update;
//     valid label keys and values on every create and update; a
//     create's 422 names every cause of these, in kube-apiserver's
//     order; a body that carries a resourceVersion other than "0" that
//     is a number, 500 as etcd's store answers; a custom
//     resource's body in another group version than its path's, or in
//     none, 400, and of another kind, 422 once the namespace is found
//     and any precondition met, on a PUT too), PUT (409
//     Conflict on a stale resourceVersion or a wrong uid; no
//     resourceVersion (or "0"), 422, for Leases and custom resources;
//     one that is no number, 500, on a PATCH too;
//     create-on-update for Leases (into a missing namespace 404, before
//     the resourceVersion is parsed); setting deletionTimestamp or
//     deletionGracePeriodSeconds, 422, and on a create both wiped; an
//     unchanged object is not written, but one stored at another version
//     is, at this one; a custom resource's empty labels, annotations,
//     finalizers and owner references are dropped (its metadata is
//     decoded as ObjectMeta: a field of the wrong type is 400, a null
//     label value ""), and its generation
//     rises with any change outside metadata, its stored object read at
//     the request's version, its CRD having no status subresource),
//     PATCH as a JSON merge patch (404 for a missing object; a
//     resourceVersion in the patch is a precondition, 409; null removes
//     a field, and is dropped inside a value set where there was none
//     or no object, arrays' objects too, as kube-apiserver's
//     evanphx/json-patch does; an unchanged result is not written; a patch of null is
//     400; a patched uid is 422 after the resourceVersion, a removed one
//     the stored one; a removed namespace is the request's, a
//     cluster-scoped object's patched one dropped;
//     a result that does not decode, a built-in of another kind or
//     apiVersion (kube-apiserver converts another version of its group
//     that it serves; the fake knows one) or a custom resource with no
//     kind, 422 and a
//     built-in with no apiVersion 400, before the name check and the
//     precondition; a custom resource's other kind or apiVersion, 422,
//     and one with no apiVersion, 500, after them, as kube-apiserver
//     answers each), DELETE (404; uid and resourceVersion preconditions, 409;
//     a Pod, a Service or a Namespace answers the deleted object, any
//     other a success Status; a Pod is first written with its deletion
//     mark, deletionTimestamp now and deletionGracePeriodSeconds 0, a
//     MODIFIED event before the DELETED, as for one not scheduled).
//     An owner reference repeated whole is stored once, on every write.
//     A Secret's stringData is write-only: merged into data on every
//     write, never stored; its type defaults to Opaque.
//   - encodings: JSON, protobuf for built-in types (never for custom
//     ones), and the metadata-only form (as=PartialObjectMetadataList for
//     a list, as=PartialObjectMetadata for a get or a watch) in JSON or
//     in protobuf, for custom resources too; the other form answers 406
//     (a watch: no event; a get or a write of a custom resource: 500,
//     a write's change made all the same). An error's
//     Status is in the first plain type asked for, JSON if none; a
//     delete's success Status in the type negotiated.
//   - discovery: /api, /apis, /apis/<group>, /api/v1 and
//     /apis/<group>/<version>, in the legacy form.
//
// Faults are not the server's business: WithFaults wraps it with an
// Injector that picks, per request, latency, a hang until the client
// gives up (or, with Until, until the stall ends, when the request is
// served late), a status code (409, 429, 500, 503, ...) or a dropped
// connection. CutWatches ends every open watch, as a broken connection
// does.
//
// # What it does not model
//
// Authentication and authorization (everyone may do anything), admission
// and validation beyond the checks above (an Event, served as a custom
// resource by this library's tests, is not validated as events.k8s.io
// validates it; a DELETE's propagationPolicy is not checked; annotation
// keys, finalizer names and owner references are not validated; an
// update's 422 names its generateName, name and label causes together
// but its uid and deletion-field causes, and a type meta error, each in
// a 422 of its own, where the real one lists every cause in one), defaulting,
// managedFields, a GET at a resourceVersion newer than the server's (the
// real one waits about 3 s and answers 504; this one answers at once),
// finalizers and graceful deletion (a DELETE removes at once, a
// scheduled Pod's too, at once after its mark; a deleted
// namespace vanishes instead of staying Terminating, and its objects
// stay), PATCH types other than merge patch (JSON patch, strategic merge,
// server-side apply: 415 here), subresources (a custom resource's,
// which its CRD never declares here, 404 NotFound naming the object, as
// kube-apiserver answers; a built-in's a plain 404), deletecollection, dry-run,
// fieldValidation (no write reads it: unknown fields are dropped as
// under Ignore, a built-in's by its Go type, a custom resource's in its
// metadata, the rest kept; never Strict's 400 nor Warn's warning), the
// aggregated discovery form, the watch cache's own answers (resourceVersion "0"
// honours limit here, as with the cache off; a WATCH without a
// resourceVersion gets no initial-events-end bookmark, as with the cache
// off), and the real server's timing: discovery lists a custom resource
// the moment it is served (the real one lags), a removed one's watches end
// at once (the real one takes about a second), and bookmarks are due
// exactly, once (the real cache looks every second, jittered). The
// periodic bookmark's resourceVersion is the server's, which other
// resources' writes move too; the real cache learns of those only through
// etcd's progress notifications.
//
// # Invariants
//
//   - The state of a resource at resourceVersion N, for any N since the
//     last compaction, is the state at the compaction plus the writes up
//     to N (TestAListAtAnOlderResourceVersionShowsTheStateThen; against
//     the real server, TestConformance's PagingAndSelectors and
//     TestConformanceWithoutWatchCache's Compaction).
//   - Each watch gets its events in resourceVersion order; writes never
//     wait for a slow watcher (its queue is unbounded). Proved by
//     TestWritesNeverWaitForAWatchThatIsNotReadAndItGetsEveryEventInOrder,
//     and against the real server by TestConformance's WatchEvents.
//   - Created inside a synctest bubble, the server, InMemory and the
//     clients that use it wait only on the bubble's channels, timers and
//     locks: synctest.Wait returns once every request is answered and
//     every watch is idle. Proved by
//     TestInformerInABubbleConvergesOnTheFakeServer,
//     TestLeaderElectionInABubbleHasExactlyOneLeader and
//     TestFaultsAnswerForTheServerOnSimulatedTime.
package fakeapiserver
