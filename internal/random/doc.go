// Package random is the one place the library draws randomness: the
// fractions that spread its waits (a reflector's backoff and watch
// timeout, an elector's retry period, a sharder's Lease polls), so that
// many replicas do not act in lockstep, and the random part of a shard
// member's id, so that no id is used twice. Drawing them here lets the
// simulation (package simulation) make them repeatable.
//
// Fraction draws from math/rand/v2's global source and Token from
// crypto/rand, until Seed installs a seeded source: then every Fraction,
// from any goroutine, comes from one seeded stream, and the n-th Token
// of a key is the same on every run, whichever order the keys draw in
// (two members starting at one instant of simulated time draw in the
// runtime's order). Seed is for one run at a time; the caller serializes
// runs.
package random
