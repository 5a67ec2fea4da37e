// Package memlistwatch is an in-memory API server for one collection of
// objects: a ListerWatcher that answers LIST and WATCH with the semantics
// an etcd-backed kube-apiserver (watch cache off) has for the parameters a
// reflector sends, so examples can print exact output and unit tests can
// provoke each fault on cue. List's doc says exactly what it answers; the
// parameters it does not know (selectors) are refused, not ignored. Its counterpart in client-go is
// FakeControllerSource (tools/cache/testing); this one also pages, compacts
// on command, streams initial lists and sends bookmarks.
//
// It teaches and tests; it never replaces the integration tests, which run
// against a real etcd and kube-apiserver (testenv). What it shows
// is the protocol; what it cannot show is a real server's timing, caches and
// failure modes.
//
// # Where it sits
//
//	your test ──Create / Update / Delete, faults──▶ ListerWatcher ◀──List / Watch── reflector
//
// It stands where kube-apiserver stands in the data flow. It satisfies the
// reflector's ListerWatcher[T] interface by shape alone (Go interfaces are
// structural), so it imports nothing of this module but the root package.
//
// # Usage
//
//	lw := memlistwatch.New[*corev1.ConfigMap]()
//	lw.Create(cm)                    // resourceVersion 2; 3, 4, ... follow
//	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store})
//	go r.Run(ctx)
//	lw.DropWatches()                 // the reflector re-watches from its last resourceVersion
//	lw.Disconnect(); lw.Delete(key); lw.Compact(); lw.Reconnect()
//	                                 // its re-watch gets 410 Gone, so it relists
//
// # What it simulates
//
//   - resourceVersions: one counter; every write takes the next value, and
//     a LIST answers with the latest. AdvanceResourceVersion moves it on as
//     writes to other collections would (etcd has one counter for all).
//   - history: every write since the last Compact, so a WATCH from an old
//     resourceVersion replays what happened since, and one from before the
//     compaction gets 410 Gone, as from etcd.
//   - paging: limit and continue, each page of one list showing one state.
//   - streaming lists (sendInitialEvents), bookmarks on command (Bookmark),
//     watch timeouts (timeoutSeconds), cut connections (DropWatches), an
//     unreachable server (Disconnect), a server that refuses streaming
//     (RefuseStreamingLists), and request counts (Stats).
//
// Not simulated: label and field selectors (answered with 400 rather than
// ignored), the watch cache, and admission, validation and preconditions on
// writes. Nor are the fields the API server sets on a create: an object
// keeps the UID (and creationTimestamp) it was given, none if none, where
// kube-apiserver gives every new object a UID of its own. So a test of an
// object deleted and created again under the same name gives each life
// its own UID, or the code under test cannot tell the two apart.
//
// # Invariants
//
//   - The collection's state at resourceVersion N, for any N since the last
//     Compact, is the state at the compaction plus the writes up to N.
//     Proved by TestTheStateAtAResourceVersionIsTheCompactionPlusTheWritesUpToIt
//     and TestExactListShowsThePastUntilCompacted.
//   - Every object handed out (by a write, a LIST or a watch event) is a
//     deep copy; callers may keep and modify it. Proved by
//     TestObjectsHandedOutAreCopies and
//     TestObjectsReadFromAListOrAWatchAreCopies.
//   - Events reach each watch in resourceVersion order, after the ADDED
//     events of a watch from "" or "0" or of a streaming list, which
//     come in key order, each at its object's resourceVersion (see
//     Watch). Writes never block
//     on a slow watcher: each watch queues without bound, and one goroutine
//     per open watch delivers; it exits when the watch ends. Proved by
//     TestASlowWatcherNeverBlocksWriters and
//     TestAWatchsGoroutineEndsWithTheWatch.
package memlistwatch
