package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections from a loopback address to one upstream
// address, byte for byte, and injects faults on command: latency, cut
// connections, refused connections, a partition (Blackhole). It never
// looks inside the bytes, so TLS
// and HTTP/2 pass through it unchanged.
type Proxy struct {
	upstream string
	addr     string // the listen address; fixed, so a refusal's end reopens the same port

	rttNanos atomic.Int64 // added round-trip time; half is added in each direction

	accepted atomic.Int64 // connections accepted since Start
	cut      atomic.Int64 // connections ended by CutAll
	bytesUp  atomic.Int64 // bytes delivered client → upstream
	bytesDn  atomic.Int64 // bytes delivered upstream → client

	mu        sync.Mutex
	listener  net.Listener       // guarded by mu; nil while refusing or closed
	links     map[*link]struct{} // guarded by mu; the open connections
	reopen    *time.Timer        // guarded by mu; non-nil while refusing
	partition chan struct{}      // guarded by mu; non-nil while blackholed, closed by Heal
	closed    bool               // guarded by mu
	closing   chan struct{}      // closed by Close: ends every wait for Heal
	wg        sync.WaitGroup     // every goroutine the proxy started
}

// Start listens on a free loopback port and forwards every connection to
// upstream (host:port). Close it when done.
func Start(upstream string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{upstream: upstream, addr: l.Addr().String(), links: map[*link]struct{}{}, closing: make(chan struct{})}
	p.serve(l)
	return p, nil
}

// Addr is the proxy's host:port; point clients here instead of upstream.
func (p *Proxy) Addr() string { return p.addr }

// SetRTT adds rtt to every round trip through the proxy, half on the way
// to upstream and half on the way back, for connections open now and
// later. Zero removes it. Throughput is not limited: bytes are delayed,
// not slowed.
func (p *Proxy) SetRTT(rtt time.Duration) { p.rttNanos.Store(int64(rtt)) }

// oneWay is the delay each direction adds now.
func (p *Proxy) oneWay() time.Duration { return time.Duration(p.rttNanos.Load()) / 2 }

// CutAll ends every open connection at once with a TCP reset, as a network
// failure would, and returns how many it ended. The listener stays open,
// so clients can reconnect at once: an open watch ends, the next request
// works.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
	p.cut.Add(int64(len(links)))
	return len(links)
}

// Refuse closes the listening socket for d, so new connections are refused
// at once (ECONNREFUSED) rather than hanging, and then reopens it on the
// same port. Open connections are not touched; call CutAll as well for a
// full outage. Refusing while already refusing moves the refusal's end
// to d from now, sooner or later than it was.
func (p *Proxy) Refuse(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.listener != nil {
		p.listener.Close()
		p.listener = nil
	}
	if p.reopen != nil {
		p.reopen.Stop()
	}
	p.reopen = time.AfterFunc(d, p.listenAgain)
}

// listenAgain ends a refusal by listening on the proxy's address again,
// retrying briefly if the port is momentarily unavailable.
func (p *Proxy) listenAgain() {
	for {
		p.mu.Lock()
		if p.closed || p.listener != nil {
			p.mu.Unlock()
			return
		}
		l, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.reopen = nil
			p.serveLocked(l)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

// Stats is a snapshot of what passed through the proxy since Start.
type Stats struct {
	Accepted          int64 // connections accepted
	Open              int   // connections open now
	Cut               int64 // connections ended by CutAll
	BytesToUpstream   int64
	BytesFromUpstream int64
	Refusing          bool // new connections are being refused
	Blackholed        bool // nothing crosses until Heal
}

// Stats returns the proxy's counters now.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open, refusing, blackholed := len(p.links), p.listener == nil && !p.closed, p.partition != nil
	p.mu.Unlock()
	return Stats{
		Accepted:          p.accepted.Load(),
		Open:              open,
		Cut:               p.cut.Load(),
		BytesToUpstream:   p.bytesUp.Load(),
		BytesFromUpstream: p.bytesDn.Load(),
		Refusing:          refusing,
		Blackholed:        blackholed,
	}
}

// Close stops listening, ends every connection and returns once all of the
// proxy's goroutines have exited.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errors.New("faultproxy: already closed")
	}
	p.closed = true
	close(p.closing)
	if p.listener != nil {
		p.listener.Close()
		p.listener = nil
	}
	if p.reopen != nil {
		p.reopen.Stop()
	}
	links := p.links
	p.links = map[*link]struct{}{}
	p.mu.Unlock()
	for l := range links {
		l.close(false)
	}
	p.wg.Wait()
	return nil
}

// serve starts accepting on l.
func (p *Proxy) serve(l net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serveLocked(l)
}

func (p *Proxy) serveLocked(l net.Listener) {
	p.listener = l
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return // the listener was closed by Refuse or Close
			}
			p.accepted.Add(1)
			p.wg.Add(1)
			go p.connect(conn)
		}
	}()
}

// connect dials upstream for one accepted client connection and starts
// forwarding. While the proxy is blackholed it waits for Heal first. If
// upstream is unreachable the client connection is closed, which is what
// the client would see without a proxy, only later.
func (p *Proxy) connect(client net.Conn) {
	defer p.wg.Done()
	if !p.waitHealed(p.closing) {
		client.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	l := newLink(client.(*net.TCPConn), up.(*net.TCPConn))
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close(false)
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}
	p.wg.Add(4)
	go p.pump(l, l.upstream, l.client, &p.bytesUp, forget)
	go p.pump(l, l.client, l.upstream, &p.bytesDn, forget)
}

// String describes the proxy for logs.
func (p *Proxy) String() string { return fmt.Sprintf("faultproxy %s → %s", p.addr, p.upstream) }
