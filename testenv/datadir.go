package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dataDirPrefix starts the name of every control plane's directory in the
// temporary directory; the owning process's ID follows it.
const dataDirPrefix = "listwatch-controlplane-"

// newDataDir makes the directory for a new control plane, named after
// this process, and first removes the directories of control planes whose
// process is gone: a test binary that panicked or was killed cannot remove
// its own (its etcd and kube-apiserver died with it; see tieToParent).
func newDataDir() (string, error) {
	removeOrphanedDataDirs(os.TempDir())
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", dataDirPrefix, os.Getpid()))
}

// removeOrphanedDataDirs removes, in dir, the control-plane directories
// whose owning process no longer runs. Errors are ignored: it is tidying.
func removeOrphanedDataDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := ownerPID(e.Name())
		if ok && e.IsDir() && !processExists(pid) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// ownerPID reads the process ID from a name made by newDataDir.
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, dataDirPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}
