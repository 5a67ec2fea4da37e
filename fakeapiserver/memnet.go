package fakeapiserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// Listener is an in-memory network endpoint: Dial hands Accept one end
// of a net.Pipe and returns the other. Nothing touches the operating
// system, so inside a synctest bubble (where it must be created) every
// wait on it is a wait on a channel of the bubble: durably blocking, as
// real sockets are not. It implements net.Listener.
type Listener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// Listen returns a new in-memory Listener.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// ErrClosed is Dial's and Accept's error after Close.
var ErrClosed = errors.New("fakeapiserver: in-memory listener closed")

// Accept waits for the next Dial, or Close.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, ErrClosed
	}
}

// Close stops Accept and Dial; connections already made stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr is a placeholder address: "memory".
func (l *Listener) Addr() net.Addr { return memAddr{} }

// Dial connects to the listener, whatever network and address are
// asked, waiting until Accept takes the connection, ctx ends, or Close.
// Its signature is a DialContext's.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
	case <-l.closed:
	}
	client.Close()
	server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrClosed
}

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "memory" }

// InMemory is a handler served over an in-memory Listener by a real
// net/http server, and a client transport that reaches it: the whole
// HTTP stack of this library's clients runs, and no socket is opened.
type InMemory struct {
	listener  *Listener
	server    *http.Server
	transport *http.Transport
	served    chan struct{} // closed when Serve returns
	// stop ends every request's context: Close calls it, so a handler
	// that waits on its request (a Hang fault) returns even if net/http
	// has not noticed its connection close.
	stop context.CancelFunc
}

// ServeInMemory starts serving h. Inside a synctest bubble, call it in
// the bubble and Close before the bubble ends.
func ServeInMemory(h http.Handler) *InMemory {
	base, stop := context.WithCancel(context.Background())
	m := &InMemory{
		listener:  Listen(),
		server:    &http.Server{Handler: h, BaseContext: func(net.Listener) context.Context { return base }},
		served:    make(chan struct{}),
		transport: &http.Transport{},
		stop:      stop,
	}
	m.transport.DialContext = m.listener.Dial
	go func() {
		defer close(m.served)
		_ = m.server.Serve(m.listener)
	}()
	return m
}

// Config returns a client configuration that reaches the handler: Host
// http://fakeapiserver, and the in-memory transport. No credentials; the
// fake authorizes everyone. QPS and Burst are left at zero (client-go's
// defaults, or this library's where it sets its own).
func (m *InMemory) Config() *rest.Config {
	return &rest.Config{Host: "http://fakeapiserver", Transport: m.transport}
}

// Close ends every connection, every request's context and the server,
// and waits until it has stopped serving. Requests in flight fail on
// the client's side.
func (m *InMemory) Close() {
	m.stop()
	_ = m.server.Close()
	m.transport.CloseIdleConnections()
	<-m.served
}
