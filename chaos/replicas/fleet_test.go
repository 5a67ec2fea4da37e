package replicas

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/listwatch/informer/testenv/faultproxy"
)

// span is a stretch of time a fault lasted; to is zero while it lasts.
type span struct{ from, to time.Time }

// covers reports whether the span overlaps [from, to].
func (s span) covers(from, to time.Time) bool {
	end := s.to
	if end.IsZero() {
		end = to.Add(time.Nanosecond)
	}
	return s.from.Before(to) && from.Before(end)
}

// proc is one replica process, behind a fault proxy of its own. Its
// times are written by the fleet under fleet.mu.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.Closer
	proxy *faultproxy.Proxy
	done  chan struct{} // closed once the process has exited and its output is read

	killedAt time.Time // SIGKILL sent; zero if never
	exitedAt time.Time // the process is gone (any way)
	pauses   []span    // SIGSTOP until SIGCONT
	leaving  bool      // asked to stop (SIGTERM): not expected back in the ring
}

// fleet starts replica processes and keeps everything they printed.
type fleet struct {
	base replicaConfig // Name and Host are set per process
	api  string        // the API server's host:port, behind each proxy

	mu     sync.Mutex
	next   int
	procs  []*proc
	events []event
	errs   []string // "error" lines and stray output, for the failure report
	logs   []string // the replicas' stderr, last lines only
	alarms []string // stderr lines that mean a replica is broken: a race report, a panic
}

// start starts the next replica, r<n>, behind a new fault proxy.
func (f *fleet) start() (*proc, error) {
	proxy, err := faultproxy.Start(f.api)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.next++
	name := fmt.Sprintf("r%d", f.next)
	f.mu.Unlock()
	c := f.base
	c.Name, c.Host = name, proxy.Addr()
	encoded, err := json.Marshal(c)
	if err != nil {
		proxy.Close()
		return nil, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(encoded))
	cmd.SysProcAttr = tieToParent()
	cmd.Stderr = &lineLog{f: f, prefix: name + ": "}
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err1 != nil || err2 != nil {
		proxy.Close()
		return nil, fmt.Errorf("pipes: %v %v", err1, err2)
	}
	if err := cmd.Start(); err != nil {
		proxy.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, stdin: stdin, proxy: proxy, done: make(chan struct{})}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	go func() {
		readEvents(name, stdout, f.record, func(line string) { f.stray(name + ": " + line) })
		cmd.Wait()
		f.mu.Lock()
		p.exitedAt = time.Now()
		f.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (f *fleet) record(ev event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, ev)
	if ev.kind == "error" {
		f.errs = append(f.errs, ev.proc+": "+strings.Join(ev.fields, " "))
	}
}

func (f *fleet) stray(line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, line)
}

// kill SIGKILLs p and waits for it: no release, no goodbye.
func (f *fleet) kill(p *proc) {
	f.mu.Lock()
	p.killedAt = time.Now()
	f.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies as well, but its state should read "running"
	p.cmd.Process.Kill()
	<-p.done
	p.proxy.Close()
}

// pause SIGSTOPs p; resume SIGCONTs it.
func (f *fleet) pause(p *proc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGSTOP)
	p.pauses = append(p.pauses, span{from: time.Now()})
}

func (f *fleet) resume(p *proc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.pauses[len(p.pauses)-1].to = time.Now()
}

// leave asks p to stop (SIGTERM): its members release their Leases and
// it exits. It waits for the exit, at most grace, then kills p.
func (f *fleet) leave(p *proc, grace time.Duration) {
	f.mu.Lock()
	p.leaving = true
	f.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		f.kill(p)
	}
	p.proxy.Close()
}

// stopAll ends every process still running: stdin closed (a graceful
// stop), SIGCONT in case it is paused, and SIGKILL after grace. It is
// safe to call twice; t.Cleanup calls it whatever happened.
func (f *fleet) stopAll(grace time.Duration) {
	for _, p := range f.running() {
		p.stdin.Close()
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.proxy.Heal()
	}
	timeout := time.After(grace)
	for _, p := range f.running() {
		select {
		case <-p.done:
		case <-timeout:
			f.kill(p)
		}
	}
	f.mu.Lock()
	procs := slices.Clone(f.procs)
	f.mu.Unlock()
	for _, p := range procs {
		<-p.done
		p.proxy.Close() // an error for an already closed proxy is fine
	}
}

// running returns the processes not yet exited, in start order.
func (f *fleet) running() []*proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*proc
	for _, p := range f.procs {
		if p.exitedAt.IsZero() && p.killedAt.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

// snapshot returns a copy of the events so far.
func (f *fleet) snapshot() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// lineLog keeps the last lines a replica wrote to stderr.
type lineLog struct {
	f       *fleet
	prefix  string
	partial []byte
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.partial = append(l.partial, b...)
	for {
		i := slices.Index(l.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := l.prefix + string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.f.mu.Lock()
		if strings.Contains(line, "DATA RACE") || strings.Contains(line, "panic:") || strings.Contains(line, "fatal error:") {
			l.f.alarms = append(l.f.alarms, line)
		}
		l.f.logs = append(l.f.logs, line)
		if len(l.f.logs) > 400 {
			l.f.logs = l.f.logs[len(l.f.logs)-200:]
		}
		l.f.mu.Unlock()
	}
}
