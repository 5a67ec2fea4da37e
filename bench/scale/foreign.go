package scale

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// ForeignLoadLimit is the most CPU, in cores, that processes other than
// the measured ones may take during a pair for its row to judge a goal:
// a tenth of a core. The load average cannot tell: it counts the
// measured processes too (on 2 cores a sync alone reads 3 to 5).
const ForeignLoadLimit = 0.1

// foreignMeter measures what every other process took while a pair ran:
// the machine's user CPU time less that of this process, of the children
// it ran and waited for (each sync's process) and of the control plane
// (etcd, kube-apiserver); see MachineUserSeconds.
type foreignMeter struct {
	pids    []int // the control plane's processes
	start   time.Time
	machine float64
	ours    float64
}

func newForeignMeter(pids []int) *foreignMeter { return &foreignMeter{pids: pids} }

// measured is the user CPU-seconds used so far by this process, its
// waited-for children and the control plane, and by the whole machine.
func (m *foreignMeter) measured() (ours, machine float64, err error) {
	var children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		return 0, 0, fmt.Errorf("scale: reading the children's CPU time: %w", err)
	}
	ours = time.Duration(children.Utime.Nano()).Seconds()
	pids := append([]int{os.Getpid()}, m.pids...)
	for _, pid := range pids {
		cpu, _, err := statTimes(pid)
		if err != nil {
			return 0, 0, err
		}
		ours += cpu
	}
	machine, err = MachineUserSeconds()
	return ours, machine, err
}

func (m *foreignMeter) begin() error {
	ours, machine, err := m.measured()
	m.start, m.ours, m.machine = time.Now(), ours, machine
	return err
}

// end returns the cores other processes took since begin.
func (m *foreignMeter) end() (float64, error) {
	ours, machine, err := m.measured()
	if err != nil {
		return 0, err
	}
	wall := time.Since(m.start).Seconds()
	if wall <= 0 {
		return 0, fmt.Errorf("scale: a pair took no time")
	}
	return max((machine-m.machine)-(ours-m.ours), 0) / wall, nil
}
