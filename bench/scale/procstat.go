package scale

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// serverUsage is what one sync cost the apiserver: CPU-seconds (user +
// system) and its peak resident memory while the sync ran.
type serverUsage struct {
	CPUSeconds float64
	PeakRSS    float64 // bytes
}

// serverMeter reads a process's CPU time and peak RSS from /proc. start
// resets the peak (clear_refs 5: VmHWM := VmRSS), stop reads both.
type serverMeter struct {
	pid      int
	cpuStart float64
}

func newServerMeter(pid int) *serverMeter { return &serverMeter{pid: pid} }

func (m *serverMeter) start() error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", m.pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("scale: resetting the apiserver's peak RSS: %w", err)
	}
	cpu, err := cpuSeconds(m.pid)
	m.cpuStart = cpu
	return err
}

func (m *serverMeter) stop() (serverUsage, error) {
	cpu, err := cpuSeconds(m.pid)
	if err != nil {
		return serverUsage{}, err
	}
	peak, err := peakRSS(m.pid)
	if err != nil {
		return serverUsage{}, err
	}
	return serverUsage{CPUSeconds: cpu - m.cpuStart, PeakRSS: peak}, nil
}

// CPUSeconds is the CPU time (user + system) process pid has used so
// far, from /proc: what a benchmark reads before and after to learn what
// the API server spent on it.
func CPUSeconds(pid int) (float64, error) { return cpuSeconds(pid) }

// cpuSeconds is utime + stime of pid.
func cpuSeconds(pid int) (float64, error) {
	utime, stime, err := statTimes(pid)
	return utime + stime, err
}

// ProcessTimes is the user and the system CPU time process pid has used
// so far, in seconds, from /proc: the user side is what
// MachineUserSeconds counts.
func ProcessTimes(pid int) (user, system float64, err error) { return statTimes(pid) }

// statTimes is utime and stime of pid, in seconds: fields 14 and 15 of
// /proc/PID/stat (counted after the command name, which may hold spaces).
func statTimes(pid int) (utime, stime float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("scale: reading the CPU time of process %d: %w", pid, err)
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, 0, fmt.Errorf("scale: /proc/%d/stat has no command name", pid)
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state), so field k is fields[k-3].
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("scale: /proc/%d/stat has %d fields after the name", pid, len(fields))
	}
	u, err1 := strconv.ParseFloat(fields[11], 64)
	st, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("scale: /proc/%d/stat: utime %q, stime %q", pid, fields[11], fields[12])
	}
	return u / clockTicks, st / clockTicks, nil
}

// peakRSS is VmHWM of pid, in bytes.
func peakRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("scale: reading the apiserver's peak RSS: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("scale: /proc/%d/status: VmHWM %q", pid, rest)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("scale: /proc/%d/status has no VmHWM", pid)
}

// MachineUserSeconds is the CPU time every core of the machine has spent
// running user code since boot (user and nice, the first line of
// /proc/stat). Over a sample, that less the user time of the processes
// measured is what every other process took: the foreign load a
// measurement must not be judged under. System and interrupt time are
// left out on both sides: the kernel's work for the measured processes'
// own traffic (loopback, softirqs) is charged to no process, and would
// read as foreign.
func MachineUserSeconds() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("scale: reading the machine's CPU time: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 3 || fields[0] != "cpu" {
		return 0, fmt.Errorf("scale: /proc/stat begins %q, want the cpu line", line)
	}
	user, err1 := strconv.ParseFloat(fields[1], 64)
	nice, err2 := strconv.ParseFloat(fields[2], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("scale: /proc/stat: user %q, nice %q", fields[1], fields[2])
	}
	return (user + nice) / clockTicks, nil
}
