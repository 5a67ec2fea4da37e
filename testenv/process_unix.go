//go:build unix

package testenv

import "syscall"

// processExists reports whether a process with pid exists (signal 0 is
// delivered to none, only checked).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
