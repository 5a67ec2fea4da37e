package testenv_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

// orphanHelperEnv makes this test binary, re-executed, start a control
// plane, print its PIDs and wait to be killed. It runs from init, before
// TestMain, so the helper starts no shared control plane.
const orphanHelperEnv = "TESTENV_ORPHAN_HELPER"

func init() {
	if os.Getenv(orphanHelperEnv) != "1" {
		return
	}
	cp, err := testenv.Start(context.Background(), testenv.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("pids:", cp.PIDs()[0], cp.PIDs()[1], cp.Dir())
	select {} // wait for the parent test to kill us
}

func TestControlPlaneDiesWithAKilledTestBinaryAndLeavesNoFiles(t *testing.T) {
	var dataDir string
	t.Run("kill the helper", func(t *testing.T) {
		// The helper's control plane keeps its data under this test's
		// TempDir (through TMPDIR), which the testing package removes: a
		// killed helper cannot remove it itself.
		tmp := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), orphanHelperEnv+"=1", "TMPDIR="+tmp)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		defer cmd.Process.Kill()

		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err)
		var etcdPID, apiPID int
		_, err = fmt.Sscanf(line, "pids: %d %d %s", &etcdPID, &apiPID, &dataDir)
		require.NoError(t, err, "helper said: %s", line)
		require.True(t, processAlive(etcdPID) && processAlive(apiPID))
		require.True(t, strings.HasPrefix(dataDir, tmp), "the helper's data %s is under %s", dataDir, tmp)

		// SIGKILL: the helper gets no chance to clean up. The kernel must.
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		require.Eventually(t, func() bool { return !processAlive(etcdPID) && !processAlive(apiPID) },
			hangGuard, 50*time.Millisecond, "etcd or kube-apiserver outlived the killed test binary")
	})
	_, err := os.Stat(dataDir)
	assert.True(t, os.IsNotExist(err), "the killed helper's data directory %s is left behind (%v)", dataDir, err)
}

func TestStartWithoutBinariesNamesTheMissingOneAndTheBuildCommand(t *testing.T) {
	t.Setenv(testenv.ToolsCacheEnv, t.TempDir())
	t.Setenv(testenv.BinDirEnv, "") // the tools cache, not a directory given by hand
	_, err := testenv.Start(context.Background(), testenv.Options{})
	var missing *testenv.MissingBinaryError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, "etcd", missing.Name)
	assert.Contains(t, err.Error(), "etcd v3.7.3 not found")
	assert.Contains(t, err.Error(), testenv.BuildCommand)
	assert.Contains(t, err.Error(), "make tools")
}

func TestStartWithAnEmptyBinDirNamesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(testenv.BinDirEnv, dir)
	_, err := testenv.Start(context.Background(), testenv.Options{})
	var missing *testenv.MissingBinaryError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, filepath.Join(dir, "etcd"), missing.Path)
	assert.Contains(t, err.Error(), testenv.BinDirEnv)
}

func TestStartFindsTheBinariesFromAnyWorkingDirectory(t *testing.T) {
	t.Chdir(t.TempDir()) // no go.mod of this module above it
	cp, err := testenv.Start(context.Background(), testenv.Options{})
	require.NoError(t, err)
	cp.Stop()
}

// processAlive reports whether pid is a live process. A zombie (killed,
// not yet reaped by its new parent) counts as dead.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func mustParseRV(t *testing.T, rv string) int64 {
	t.Helper()
	var n int64
	_, err := fmt.Sscan(rv, &n)
	require.NoError(t, err, "resourceVersion %q", rv)
	return n
}
