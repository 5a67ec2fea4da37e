package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDataDirsOfProcessesThatAreGoneAreRemovedOthersKept(t *testing.T) {
	tmp := t.TempDir()
	gone := exec.Command("true")
	require.NoError(t, gone.Run()) // its PID now belongs to no process
	mine := filepath.Join(tmp, fmt.Sprintf("%s%d-1", dataDirPrefix, os.Getpid()))
	orphan := filepath.Join(tmp, fmt.Sprintf("%s%d-2", dataDirPrefix, gone.Process.Pid))
	unrelated := filepath.Join(tmp, "listwatch-controlplane-notapid")
	for _, dir := range []string{mine, orphan, unrelated} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "etcd-data"), 0o755))
	}

	removeOrphanedDataDirs(tmp)
	assert.DirExists(t, mine, "this process's control plane is running")
	assert.NoDirExists(t, orphan, "a panicked or killed test binary's data is removed")
	assert.DirExists(t, unrelated, "only names made by newDataDir are touched")
}
