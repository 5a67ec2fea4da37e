// Package jitter is the one place the library draws the random fractions
// that spread its waits: a reflector's backoff and watch timeout, an
// elector's retry period, a sharder's Lease polls. Spreading them keeps
// many replicas from acting in lockstep; drawing them here lets the
// simulation (package simulation) make them repeatable.
//
// Fraction draws from math/rand/v2's global source, until Seed installs a
// seeded one: then every draw, from any goroutine, comes from that one
// stream, so a run whose goroutines draw in the same order gets the same
// fractions. Seed is for one run at a time; the caller serializes runs.
package jitter
