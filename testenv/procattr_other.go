//go:build !linux

package testenv

import "syscall"

// tieToParent has no portable equivalent of Linux's parent-death signal;
// elsewhere the children are stopped by ControlPlane.Stop only.
func tieToParent() *syscall.SysProcAttr { return nil }
