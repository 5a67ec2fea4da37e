// Package consumer is a controller written in a module of its own, outside
// github.com/listwatch/informer, on nothing but the library's public API:
// what someone who read the docs and ran `go get` would write. It keeps
// the library honest in two ways that a test inside the library cannot:
//
//   - it can import no internal package, so what it needs must be public
//     (sharedinformer, workqueue, lister, readyourwrites, and testenv
//     for its tests);
//   - its module graph is what a consumer pays: footprint_test.go compares
//     it with that of a plain client-go consumer (the module in
//     bench/footprint/baseline).
//
// Its go.mod replaces the library with this checkout (../), and its tests
// run with GOWORK=off, as `make test` runs every module.
package consumer
