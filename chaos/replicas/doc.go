// Package replicas holds no code, only a test: a randomized checker of
// what package sharding promises about its replicas, on a real control
// plane (testenv), under a seeded schedule of faults.
//
// # What runs
//
// Three to five replica processes (this test binary, re-executed with
// CHAOS_REPLICA set), each reaching the API server through a fault proxy
// of its own (testenv/faultproxy) as an RBAC-limited user. Each replica
// is a member of two rings, "web" and "web-api", and a sharder
// candidate of both: the two ring names share a prefix, and both rings
// shard the same ConfigMaps in one namespace, so a sharder that reads the
// other ring's Leases or labels as its own is caught.
//
// Each ring's reconcile (term_test.go) reads a parent ConfigMap from its
// member's cache, works for a moment, then writes the annotation
// reconciled-by-<ring> = <member>/<tick> on the parent and on its child
// for that ring (<parent>-<ring>, created if missing, owned by the
// parent). Every write is a merge PATCH carrying the resourceVersion the
// cache held, so the API server refuses it (409) if anyone wrote the
// object since. Every replica prints each reconcile's start and end, each
// write and its outcome, and each term's start and end, as lines ending
// in Unix nanoseconds (record_test.go): one machine, one clock.
//
// Writers, as the admin, update parents a few times a second and create
// and delete parents while the faults run. The faults (schedule_test.go)
// come from a seed: SIGKILL of a replica (a new one takes its place),
// SIGSTOP past LeaseDuration then SIGCONT, a partition (blackholed
// proxy) past LeaseDuration then heal, deletion of a member's Lease and
// of the elected sharder's Lease, a join followed by SIGKILL of a ring's
// elected sharder at its first drain (mid-rebalance), a join, a graceful
// leave (SIGTERM), and 403 Forbidden on ConfigMaps for a few seconds
// (the RoleBinding deleted, then created again). Every kind runs once, in
// an order the seed chooses; a longer -duration adds random ones. The
// same seed gives the same schedule; which replica a fault hits is chosen
// from the replicas running at that moment.
//
// Lease timing is short (LeaseDuration 4 s, RenewDeadline 3 s,
// RetryPeriod 500 ms), so every fault ends terms within the run.
//
// # What it checks
//
// (a) Per ring and key, no two members' reconciles overlap in time.
// Overlaps where one of the two processes was SIGSTOPped during its
// reconcile, or began it after its term had run out during a pause (the
// resumed process's workers can take a key before its overdue watchdog
// ends the term), are counted apart ("paused"), not failed: leader election
// does not fence a paused process (see its doc). For those, the
// resourceVersion guard is what protects the object: every write sent
// after the writer's term deadline (a "late write") must be refused with
// 409, or else be harmless, accepted only because no other member had
// reconciled the key since the late writer read it. A late write accepted
// while another member held the key fails the run.
//
// The checker also watches every object itself, as the admin, and
// records each direct relabel: a shard label changed from one member
// straight to another, with no acknowledged drain between (moves_test.go).
// Sharding promises that a live member's object moves only after that
// member acknowledged a drain, so a direct relabel seen before the old
// member's term ended fails the run, whether or not a reconcile happened
// to be running at that moment. A child is no exception (it leaves a
// live member by a drain too, as package sharding drains it); the table
// counts parents and children apart.
//
// (b) After the last fault ends, within a bound derived from the Lease
// timing (convergenceBound states each term), every running replica is
// one live member of each ring with a fresh Lease, and every object,
// read from the API server, carries each ring's label naming the live
// member the ring assigns it to, with no drain, and each parent was
// reconciled by its owner.
//
// (c) Every parent the writers created and did not delete exists, with
// its child in each ring; no parent exists that they deleted or never
// created; no replica created a child twice.
//
// # The table
//
// Each run prints a table: the faults by kind; overlapping reconciles,
// outside pauses (must be 0) and with a paused replica (reported);
// direct relabels, and those off a member still in its term (must be 0);
// late writes refused (409), accepted while another member held the key (must
// be 0), accepted while nobody else did, and failed otherwise (a 403, a
// timeout); the time from the end of the last fault to convergence, with
// its bound; and objects lost, present though deleted, or created twice.
// Every failure names the fault that preceded it.
//
// # Running it
//
//	cd chaos && go test -race -count=1 -run TestReplica ./replicas -v               # one seed, about 2 minutes
//	CHAOS_SEED=17 go test -race -count=1 -run TestReplica ./replicas -v             # replay seed 17
//	make chaos-replicas SEEDS=30                                                    # 30 seeds, 2 minutes of faults each
//
// The last writes the table of runs to bin/chaos-replicas.md. The
// schedule replays exactly; the interleaving of the processes does not.
// -events=DIR writes every line the replicas printed, sorted by time, to
// DIR/seed-<n>.events, to read a failure from.
package replicas
