package simulation

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/informer/fakeapiserver"
)

// link is one replica slot's network to the server: the faults its
// requests meet now, and its pause gate. Every replica that runs in the
// slot (a restart gets a new identity, not a new link) talks through it,
// over an in-memory connection of its own.
type link struct {
	gate gate
	rate rate // its clock's

	seed, slot uint64

	mu        sync.Mutex
	sent      map[uint64]uint64 // how many requests of each kind; see requestRand
	latency   time.Duration
	hang      float64
	errP      float64
	status    int
	partition bool
	forbidden bool // new requests for ConfigMaps answer 403
	lag       bool // watch streams are held (see lagging)
	// cut ends the slot's open watches: closed and replaced at each
	// partition and pause, so a cut-off replica hears no more events.
	cut chan struct{}
	// conflict has another writer change the object that write r is
	// for, just before r is served (see inject).
	conflict func(r *http.Request)
	// hangEnds and partitionEnds are closed (and replaced) when a hang
	// window or a partition ends: the requests it held are then served,
	// late, as a recovered server or a healed network serves them.
	hangEnds, partitionEnds chan struct{}
	// lagEnds is closed (and replaced) when a lag window ends: the watch
	// writes it held go out.
	lagEnds chan struct{}
}

func newLink(seed int64, slot int, conflict func(*http.Request)) *link {
	return &link{seed: uint64(seed), slot: uint64(slot), sent: map[uint64]uint64{}, cut: make(chan struct{}), conflict: conflict,
		hangEnds: make(chan struct{}), partitionEnds: make(chan struct{}), lagEnds: make(chan struct{})}
}

// serve returns srv wrapped in the link's faults: what the slot's
// replicas reach over their in-memory network. A watch is tied to the
// link's cut as it arrives, before its faults and its time on the wire,
// so that a cut meanwhile ends it before it opens.
func (l *link) serve(srv http.Handler) http.Handler {
	return l.cutting(fakeapiserver.WithFaults(srv, l.inject))
}

// inject chooses a request's fault. A paused replica's request waits
// for the resume first: the process had not sent it yet.
func (l *link) inject(r *http.Request) fakeapiserver.Fault {
	discovery := isDiscovery(r.URL.Path)
	if !discovery && !l.gate.wait(r.Context()) {
		return fakeapiserver.Fault{Hang: true}
	}
	kind, err := requestKind(r) // before the lock: a body may come slowly
	if err != nil {
		return fakeapiserver.Fault{Hang: true} // the client went mid-body: nothing to serve
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rng := l.requestRand(kind)
	var f fakeapiserver.Fault
	switch {
	case discovery:
		// Errors only: client-go's discovery cache holds a mutex across
		// its requests, and a goroutine waiting on a mutex is not
		// durably blocked, so a bubble's clock would stop while one
		// waits (nothing could end a hang, a delay or a pause). See the
		// package doc, "What it does not model".
		if l.errP > 0 && rng.Float64() < l.errP && l.status != http.StatusConflict {
			f.Status = l.status
		}
		return f
	case l.partition:
		f.Hang, f.Until = true, l.partitionEnds
	case l.forbidden && isConfigMaps(r.URL.Path):
		f.Status = http.StatusForbidden
	case l.hang > 0 && rng.Float64() < l.hang:
		f.Hang, f.Until = true, l.hangEnds
	case l.errP > 0 && rng.Float64() < l.errP:
		switch {
		case l.status != http.StatusConflict:
			f.Status = l.status
			switch {
			case l.status == http.StatusTooManyRequests:
				f.RetryAfter = 1
			case l.status == http.StatusInternalServerError && r.Method != http.MethodGet && rng.IntN(2) == 0:
				// kube-apiserver's ServerTimeout: a write etcd committed
				// too slowly lands, answered 500 with a Retry-After,
				// which client-go sends again.
				f.Landed, f.RetryAfter = true, 1
			}
		case r.Method == http.MethodPatch || r.Method == http.MethodPut:
			// kube-apiserver answers 409 only to a write that lost a
			// race: another writer changes the object first, for real,
			// so the write meets a genuine conflict and the watchers see
			// the change that caused it. A 409 made up for a read, or
			// for a write whose object did not change, would tell the
			// client a lie no server tells (its event never comes).
			l.conflict(r)
		}
	}
	if l.latency > 0 {
		f.Latency = time.Duration(rng.Int64N(int64(l.latency)))
	}
	f.Latency += wireDelay(rng)
	return f
}

// maxWire bounds the delay every request (but discovery) meets on the
// simulated wire, on top of any Latency fault.
const maxWire = time.Millisecond

// wireDelay is a request's time on the wire: 1 µs to maxWire, drawn from
// its own random source. Requests sent at one simulated instant (a
// sharder's workers labelling objects together, replicas acting on one
// watch event, requests held by a pause or a hang and let go at once)
// are then served one after another in an order the seed decides, not in
// the order the runtime happened to run their goroutines, which a replay
// cannot repeat.
func wireDelay(rng *rand.Rand) time.Duration {
	return time.Microsecond + time.Duration(rng.Int64N(int64(maxWire-time.Microsecond)))
}

// requestKind hashes what a request is: its method, path, query and
// body (which it reads, and puts back for the server). It fails if the
// body cannot be read: the client went first.
func requestKind(r *http.Request) (uint64, error) {
	h := fnv.New64a()
	_, _ = io.WriteString(h, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+"\n")
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return 0, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		_, _ = h.Write(body)
	}
	return h.Sum64(), nil
}

// requestRand returns the random source for one request's faults and
// delay. It is drawn from the seed, the slot, what the request is (its
// kind, from requestKind) and how many requests of that kind the slot
// sent before: never from the order in which different requests reached
// the link, so that a replay draws the same for each request even when
// its goroutines run in another order. (Identical requests sent at once
// take their counts in arrival order; being identical, either may have
// either draw.) The counts grow with the run's requests, nearly every
// kind seen once: a run is minutes of simulated time, so they stay
// small, and counting by the whole request keeps two different writes to
// one object from trading draws. l.mu held.
func (l *link) requestRand(kind uint64) *rand.Rand {
	n := l.sent[kind]
	l.sent[kind] = n + 1
	return rand.New(rand.NewPCG(l.seed^l.slot<<32, kind+n))
}

// isConfigMaps reports whether path is the run's ConfigMaps' collection
// or one of them.
func isConfigMaps(path string) bool {
	return strings.HasPrefix(path, "/api/v1/namespaces/"+Namespace+"/configmaps")
}

// cutting ends a watch when the link is cut (a partition or a pause
// begins): the server side of the connection goes quiet, as a broken
// one does.
func (l *link) cutting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			next.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		cut := l.cut
		l.mu.Unlock()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-cut:
				cancel()
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(lagging{ResponseWriter: w, l: l, ctx: ctx}, r.WithContext(ctx))
	})
}

// cutWatches ends the slot's open watches.
func (l *link) cutWatches() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.cut)
	l.cut = make(chan struct{})
}

// set changes the link's faults under its lock.
func (l *link) set(change func(l *link)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	change(l)
}

// endHang ends the hang window; l.mu held.
func (l *link) endHang() {
	l.hang = 0
	close(l.hangEnds)
	l.hangEnds = make(chan struct{})
}

// endLag ends the lag window; l.mu held.
func (l *link) endLag() {
	l.lag = false
	close(l.lagEnds)
	l.lagEnds = make(chan struct{})
}

// endPartition ends the partition; l.mu held.
func (l *link) endPartition() {
	l.partition = false
	close(l.partitionEnds)
	l.partitionEnds = make(chan struct{})
}

// heal ends every fault window of the link (a pause ends with
// world.resume).
func (l *link) heal() {
	l.set(func(l *link) {
		l.latency, l.errP, l.status, l.forbidden = 0, 0, 0, false
		l.endLag()
		l.endHang()
		l.endPartition()
	})
}

// logWrites logs, at debug level, every write a replica sends (not its
// GETs, lists and watches) with the status the server answered: the
// requests a failing seed's history most often needs.
func logWrites(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || !log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.Debug("simulation: write", "method", r.Method, "path", r.URL.Path, "status", sw.status)
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// isDiscovery reports whether path is a discovery request: /api, /apis,
// a group version's resource list (/api/v1, /apis/g/v), /version.
func isDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	case "version", "openapi":
		return true
	}
	return false
}
