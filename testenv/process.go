package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one running control-plane binary whose output goes to a log
// file in the control plane's directory.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and waitErr is set
	waitErr error         // how it exited; read only after done is closed
}

// startProcess starts bin with args, appending its stdout and stderr to
// logPath. The child is tied to this process's lifetime (see
// tieToParent), so a test binary that dies never leaves it behind.
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = tieToParent()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop asks the process to end (SIGTERM) and kills it (SIGKILL) if it has
// not ended after grace. It returns once the process is gone.
func (p *process) stop(grace time.Duration) {
	if done, _ := p.exited(); done {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exitError describes a process that ended while we waited for it to
// become ready, with the end of its log: the reason is almost always there.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited during start-up (%v); last lines of %s:\n%s",
		p.name, p.waitErr, p.logPath, tail(p.logPath, 20))
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitUntil calls ready every 50ms until it returns true, the process
// exits, or ctx ends. The last error from ready is in the time-out message,
// so a start that hangs says what it was waiting for.
func (p *process) waitUntil(ctx context.Context, what string, ready func() (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if done, _ := p.exited(); done {
			return p.exitError()
		}
		ok, err := ready()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not %s: %w (last check: %v); last lines of %s:\n%s",
				p.name, what, context.Cause(ctx), last, p.logPath, tail(p.logPath, 20))
		case <-p.done:
		case <-tick.C:
		}
	}
}
