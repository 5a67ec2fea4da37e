package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/testenv/faultproxy"
)

// event is one line a replica process printed: its kind, its fields, and
// the wall-clock time it ends with.
type event struct {
	proc   string
	kind   string
	fields []string
	at     time.Time
}

// proc is one replica process, behind a fault proxy of its own.
type proc struct {
	name     string
	cmd      *exec.Cmd
	stdin    io.Closer
	proxy    *faultproxy.Proxy
	killedAt time.Time // zero while it runs; written before the kill, read after
}

// fleet is the replica processes and everything they printed.
type fleet struct {
	cfg  *rest.Config
	base replicaConfig

	mu     sync.Mutex
	procs  []*proc
	events []event
	errs   []string
}

// start starts replica name: a member and a sharder candidate as asked.
func (f *fleet) start(name string, member, sharder bool) (*proc, error) {
	proxy, via, err := cli.StartProxy(f.cfg)
	if err != nil {
		return nil, err
	}
	c := f.base
	c.Name, c.Member, c.Sharder = name, member, sharder
	c.Via, c.ServerName = proxy.Addr(), via.TLSClientConfig.ServerName
	encoded, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(encoded))
	cmd.Stderr = os.Stderr
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pipes: %v %v", err1, err2)
	}
	if err := cmd.Start(); err != nil {
		proxy.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, stdin: stdin, proxy: proxy}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	go f.read(p, stdout)
	return p, nil
}

// read records p's lines until its stdout closes.
func (f *fleet) read(p *proc, stdout io.Reader) {
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) < 2 {
			continue
		}
		ns, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			continue
		}
		ev := event{proc: p.name, kind: fields[0], fields: fields[1 : len(fields)-1], at: time.Unix(0, ns)}
		f.mu.Lock()
		f.events = append(f.events, ev)
		if ev.kind == "error" {
			f.errs = append(f.errs, p.name+": "+strings.Join(ev.fields, " "))
		}
		f.mu.Unlock()
	}
}

// kill SIGKILLs p: no release, no goodbye.
func (f *fleet) kill(p *proc) time.Time {
	at := time.Now()
	f.mu.Lock()
	p.killedAt = at
	f.mu.Unlock()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	return at
}

// stop ends every process: closing stdin asks it to stop; then it is
// killed if it has not.
func (f *fleet) stop() {
	f.mu.Lock()
	procs := append([]*proc(nil), f.procs...)
	f.mu.Unlock()
	for _, p := range procs {
		p.stdin.Close()
		p.proxy.Heal()
	}
	for _, p := range procs {
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		p.proxy.Close()
	}
}

// snapshot returns a copy of the events so far.
func (f *fleet) snapshot() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]event(nil), f.events...)
}

// failure returns the first error a replica reported, if any.
func (f *fleet) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) > 0 {
		return fmt.Errorf("a replica failed: %s", f.errs[0])
	}
	return nil
}

// members returns the member ids whose term has started and not ended,
// in processes still running, with the process of each.
func (f *fleet) members() map[string]*proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	byName := map[string]*proc{}
	for _, p := range f.procs {
		if p.killedAt.IsZero() {
			byName[p.name] = p
		}
	}
	live := map[string]*proc{}
	for _, ev := range f.events {
		switch ev.kind {
		case "member":
			if p := byName[ev.fields[0]]; p != nil {
				live[ev.fields[1]] = p
			}
		case "stopped":
			delete(live, ev.fields[0])
		}
	}
	return live
}

// leader returns the process whose sharder leads now, or nil.
func (f *fleet) leader() *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	leading := map[string]bool{}
	for _, ev := range f.events {
		if ev.kind == "sharder" {
			leading[ev.fields[0]] = ev.fields[1] == "true"
		}
	}
	for _, p := range f.procs {
		if p.killedAt.IsZero() && leading[p.name] {
			return p
		}
	}
	return nil
}

// killTimes maps each killed process to when it was killed.
func (f *fleet) killTimes() map[string]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]time.Time{}
	for _, p := range f.procs {
		if !p.killedAt.IsZero() {
			out[p.name] = p.killedAt
		}
	}
	return out
}

func parseNanos(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n)
}
