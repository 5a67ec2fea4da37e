package simulation

import (
	"context"
	"net/http"
)

// lagging is a watch's response writer on a link: while the link lags
// (a Lag window), each write of an event waits for the window's end, or
// for the watch to end (a cut, its client gone). The watch stays open,
// the server queues what comes meanwhile, and all of it arrives at the
// end, in order.
type lagging struct {
	http.ResponseWriter
	l   *link
	ctx context.Context
}

func (w lagging) Write(p []byte) (int, error) {
	for {
		w.l.mu.Lock()
		lag, ends := w.l.lag, w.l.lagEnds
		w.l.mu.Unlock()
		if !lag {
			return w.ResponseWriter.Write(p)
		}
		select {
		case <-ends:
		case <-w.ctx.Done():
			return 0, w.ctx.Err()
		}
	}
}

// Flush flushes what was written: the watch's events go out as they are
// written, as the server's own writer does.
func (w lagging) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
