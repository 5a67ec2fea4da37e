package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is one proxied connection: a client connection and the upstream
// connection made for it. When either direction ends, both connections
// are closed.
type link struct {
	client, upstream *net.TCPConn
	once             sync.Once
	closed           chan struct{} // closed by close
}

func newLink(client, upstream *net.TCPConn) *link {
	return &link{client: client, upstream: upstream, closed: make(chan struct{})}
}

// close closes both connections. With reset, they are closed with a TCP
// RST (SO_LINGER 0) so peers see "connection reset" at once, as after a
// network failure, instead of an orderly end of stream.
func (l *link) close(reset bool) {
	l.once.Do(func() {
		close(l.closed)
		if reset {
			l.client.SetLinger(0)
			l.upstream.SetLinger(0)
		}
		l.client.Close()
		l.upstream.Close()
	})
}

// chunk is bytes read from one side, to be written to the other at due.
type chunk struct {
	data []byte
	due  time.Time
}

// pump forwards src to dst until either fails, delaying each chunk by the
// proxy's one-way latency at the time it was read. It runs as two
// goroutines, a reader and a writer joined by a channel, so that latency
// delays bytes without slowing the reader: data read during one delay is
// already queued behind it, as on a long wire.
//
// When src ends, the writer still delivers what was queued, then closes
// the link (so the other direction ends too) and runs forget.
func (p *Proxy) pump(l *link, dst, src *net.TCPConn, delivered *atomic.Int64, forget func()) {
	chunks := make(chan chunk, 256)
	go func() { // writer
		defer p.wg.Done()
		defer forget()
		defer l.close(false)
		failed := false
		for c := range chunks {
			if failed {
				continue // drain, so the reader never blocks on a dead link
			}
			if !p.waitHealed(l.closed) {
				failed = true // cut or closed during a blackhole
				continue
			}
			if wait := time.Until(c.due); wait > 0 {
				time.Sleep(wait)
			}
			n, err := dst.Write(c.data)
			delivered.Add(int64(n))
			if err != nil {
				failed = true
				l.close(false) // unblocks this direction's reader
			}
		}
	}()

	defer p.wg.Done() // reader
	defer close(chunks)
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunks <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.oneWay())}
		}
		if err != nil {
			return
		}
	}
}
