//go:build !linux

package replicas

import "syscall"

// tieToParent: only Linux can tie a child's life to its parent's; on
// other systems t.Cleanup's kill is all there is.
func tieToParent() *syscall.SysProcAttr { return nil }
