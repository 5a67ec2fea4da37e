package simulation_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// runMarkerEnv, set in the environment of the run started below, finds
// that run's processes in /proc.
const runMarkerEnv = "SIMULATION_SUITE_RUN_MARKER"

// When the test binary running the 200 seeds dies (go test's -timeout,
// which panics outside the test and cancels no context, or a kill -9),
// the second process it started for half of the seeds dies with it,
// instead of running on alone. The probe (orphanProbeEnv) makes the
// binary kill itself at once, and its second process wait without
// writing, so that nothing but the tie to its parent can end it (an
// orphan that writes dies of the closed pipe, sooner or later).
func TestTheSuitesSecondProcessDiesWithItsParent(t *testing.T) {
	marker := runMarkerEnv + "=" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	parent := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestTwoHundredFaultSchedulesOfALeaderElectedReplicaSetKeepEveryInvariant$", "-test.count=1")
	parent.Env = append(os.Environ(), marker, orphanProbeEnv+"=1")
	var out bytes.Buffer
	parent.Stdout, parent.Stderr = &out, &out
	err := parent.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the probe's test binary did not kill itself (%v):\n%s", err, out.String())
	}
	// SIGKILL is sent as the parent exits; the bound only turns a child
	// that ignored it (and would wait an hour) into a failure.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				t.Errorf("process %d still runs 30 s after the test binary that started it exited", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL) // started by this test
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesWith lists the running processes whose environment holds
// env: not the zombies, dead and waiting to be reaped (this machine's
// init may be slow to reap an orphan).
func processesWith(env string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil || zombie(stat) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == env {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// zombie reads /proc/<pid>/stat: "pid (comm) state ...", comm in
// parentheses that may hold anything but end at the last ')'.
func zombie(stat []byte) bool {
	at := bytes.LastIndexByte(stat, ')')
	return at >= 0 && at+2 < len(stat) && stat[at+2] == 'Z'
}
