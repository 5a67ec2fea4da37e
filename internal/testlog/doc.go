// Package testlog holds the log helpers the tests of this module and of
// its examples share: a Buffer that a logger, or a process's output, may
// write from any goroutine while a test reads it. It is internal: a test
// helper, not part of the library.
//
// Usage:
//
//	var logs testlog.Buffer
//	logger := slog.New(slog.NewTextHandler(&logs, nil))
//	logger.Warn("gave up", "key", "default/a") // from any goroutine
//	if strings.Contains(logs.String(), "gave up") {
//		fmt.Println("logged")
//	}
//
// Invariant: Write and String may be called from any goroutines at once;
// String returns a copy that later writes do not change.
package testlog
