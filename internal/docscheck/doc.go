// Package docscheck holds the tests that keep this module's documentation
// true: every relative link in README.md and docs/ resolves, every Go
// snippet in the markdown appears in a compiled Go file, every Go code
// block in a doc comment (package docs and exported declarations, what
// `go doc` shows) compiles, every inline expression in backquotes that
// names one of this module's packages (`leaderelection.TermOf(ctx)`)
// type-checks, every test a doc or comment cites by name exists, and
// every exported identifier has a doc
// comment that starts with its name. It has no code of its own; `make
// test` runs its tests with the rest.
package docscheck
