package replicas

import "syscall"

// tieToParent makes the kernel SIGKILL a replica when the test binary
// dies, however it dies (a panic, -timeout, kill -9): no replica outlives
// the checker.
func tieToParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
