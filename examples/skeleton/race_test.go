//go:build race

package main

// The skeleton the process tests build is race-instrumented like the test
// binary, which also lets the build reuse the test build's cache.
func init() { raceEnabled = true }
