//go:build !linux

package simulation_test

import (
	"os"
	"syscall"
)

// tieToParent has no kernel help outside Linux: the second process ends
// with the test's context, or runs on if the test binary is killed.
func tieToParent() *syscall.SysProcAttr { return nil }

// dieAtOnce ends this process with no deferred call and no cleanup.
func dieAtOnce() { os.Exit(2) }
