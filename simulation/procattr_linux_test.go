package simulation_test

import (
	"os"
	"syscall"
)

// tieToParent makes the kernel SIGKILL the suite's second process when
// the test binary that started it dies, however it dies (a panic,
// -timeout, kill -9): it never runs on alone.
func tieToParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// dieAtOnce ends this process as kill -9 does: no deferred call, no
// cleanup, no context cancelled.
func dieAtOnce() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
