package testenv

import "syscall"

// tieToParent makes the kernel send SIGKILL to the child when the process
// that started it dies, however it dies (a panic, a -timeout, kill -9).
// This is what keeps etcd and kube-apiserver from outliving a test binary.
func tieToParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
