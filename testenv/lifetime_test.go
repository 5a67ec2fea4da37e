package testenv_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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
	fmt.Println("pids:", cp.PIDs()[0], cp.PIDs()[1])
	select {} // wait for the parent test to kill us
}

func TestControlPlaneDiesWithAKilledTestBinary(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	var etcdPID, apiPID int
	_, err = fmt.Sscanf(line, "pids: %d %d", &etcdPID, &apiPID)
	require.NoError(t, err, "helper said: %s", line)
	require.True(t, processAlive(etcdPID) && processAlive(apiPID))

	// SIGKILL: the helper gets no chance to clean up. The kernel must.
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Eventually(t, func() bool { return !processAlive(etcdPID) && !processAlive(apiPID) },
		10*time.Second, 50*time.Millisecond, "etcd or kube-apiserver outlived the killed test binary")
}

func TestStartWithoutBinariesNamesTheMissingOneAndTheBuildCommand(t *testing.T) {
	t.Setenv(testenv.BinDirEnv, t.TempDir())
	_, err := testenv.Start(context.Background(), testenv.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "etcd not found")
	assert.Contains(t, err.Error(), "make tools")
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
