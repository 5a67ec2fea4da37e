package simulation

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/internal/restclient"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// Namespace holds every object and Lease of a run.
const Namespace = "sim"

// Timing is the Lease timing of every candidate and member, and the
// reconciles' work: short, so that every fault ends terms within a run.
// It is given whole (Lease, Renew and Retry), or left zero for
// DefaultTiming; Run refuses one that leaderelection's Config would.
type Timing struct {
	Lease, Renew, Retry time.Duration
	Work                time.Duration // a reconcile's pause between its read and its writes
}

// DefaultTiming is chaos/replicas' timing: 4 s, 3 s, 500 ms, and 100 ms
// of work.
var DefaultTiming = Timing{Lease: 4 * time.Second, Renew: 3 * time.Second, Retry: 500 * time.Millisecond, Work: 100 * time.Millisecond}

// world is one run: the server, the admin's client, the replica slots
// and the history.
type world struct {
	opts  Options
	srv   *fakeapiserver.Server
	admin *fakeapiserver.InMemory // the writers' and the checker's network: no faults
	core  *rest.RESTClient        // the admin's client for ConfigMaps
	lease *rest.RESTClient        // the admin's client for Leases
	hist  *History
	log   *slog.Logger
	// conflicts numbers the simulated conflicting writes.
	conflicts atomic.Int64
	// setups numbers the setups of terms' controllers (Event.Setup).
	setups atomic.Uint64
	links  []*link
	// crd is the custom resources scenario's state; nil in the others.
	crd *crdWorld
	// opaqueGuards is whether the terms' guards compare resourceVersions
	// for equality only (readyourwrites.Options.OpaqueResourceVersions),
	// seeing writes arrive through a handler: one seed in two, drawn
	// from a stream of its own so every other draw stays where it was.
	opaqueGuards bool
	// unknownUIDDeletes is whether the terms' controllers record their
	// deletes as of unknown UID: one opaque seed in two, from a stream of
	// its own.
	unknownUIDDeletes bool
	// grouped is whether the writers also group parents under Groups and
	// orphan children (groups.go); groups are the Groups' UIDs.
	grouped bool
	groups  map[string]types.UID
	// crdWatchers are that scenario's checks waiting for a released
	// handler to stop; they return once crd.ended closes.
	crdWatchers sync.WaitGroup
	// rings is converged's last ring of each ring name, built again
	// only when the open terms' members change (a ring of 1000 points a
	// member costs a millisecond, and converged looks every second of
	// the settle). Only Run's goroutine, which calls converged, uses it.
	rings map[string]*sharding.Ring

	mu       sync.Mutex
	replicas []*replica        // guarded by mu; by slot, nil while a killed one waits for its restart
	gens     []int             // guarded by mu; each slot's restarts so far
	pauses   []span            // guarded by mu
	looks    map[string][]look // guarded by mu; by replica, its looks at the leader's Lease (see notingLooks)
	// streamBroken are the events a term's handler got out of order
	// ("handler stream consistent"); guarded by mu.
	streamBroken []Violation
	// ringBroken are the writes a sharder sent to another ring's Leases
	// ("a sharder keeps to its ring"); guarded by mu.
	ringBroken []Violation
	// sharderUnlabels are a sharder's writes that removed its ring's
	// label, by ring, name and the resourceVersion they were guarded
	// by (notingUnlabels); guarded by mu.
	sharderUnlabels map[string]bool
	// groupedReached counts a grouped seed's cases (groupedCoverage);
	// guarded by mu.
	groupedReached map[string]int
}

// replica is one life of one slot: a process, in the real world.
type replica struct {
	name   string
	slot   int
	link   *link
	net    *fakeapiserver.InMemory
	cfg    *rest.Config
	cancel context.CancelFunc
	done   chan struct{} // closed when everything of it has stopped
	boot   *bootTimes    // when it comes up and starts its parts; its start goroutine's alone

	mu    sync.Mutex
	terms map[string]*openTerm // guarded by mu; by ring, the open term's
	// sharders holds, by ring, the metrics of this replica's sharder
	// while it leads (guarded by mu): its cache of every object is
	// compared with the server by its cached-objects gauge.
	sharders map[string]*metrics.Memory
}

// openTerm is what the checker may ask of a replica's open term.
type openTerm struct {
	member   string
	selector labels.Selector          // the term's objects, of Namespace
	cache    func() map[string]string // the informer's objects: name → resourceVersion; nil for a Controller's term that observed none
	told     func() map[string]string // what its handler was told, replayed, likewise; nil likewise
}

func newWorld(opts Options) (*world, error) {
	w := &world{opts: opts, srv: fakeapiserver.New(), hist: &History{}, looks: map[string][]look{},
		opaqueGuards: rand.New(rand.NewPCG(uint64(opts.Seed), 0x0a9e)).IntN(2) == 0}
	w.unknownUIDDeletes = w.opaqueGuards && rand.New(rand.NewPCG(uint64(opts.Seed), 0x0a9f)).IntN(2) == 0
	w.grouped, w.groupedReached = groupedSeed(opts), map[string]int{}
	if opts.Scenario == CustomResources {
		w.crd = newCRDWorld()
	}
	w.log = opts.Logger
	if w.log == nil {
		w.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	w.admin = fakeapiserver.ServeInMemory(w.srv)
	if err := w.connectAdmin(); err != nil {
		w.admin.Close() // or its goroutines outlive the bubble
		return nil, err
	}
	for i := range opts.Replicas {
		w.links = append(w.links, newLink(opts.Seed, i, w.conflict))
		w.replicas = append(w.replicas, nil)
		w.gens = append(w.gens, 0)
	}
	return w, nil
}

// connectAdmin makes the admin's clients and the objects' namespace.
func (w *world) connectAdmin() error {
	var err error
	if w.core, err = coreClient(w.admin.Config()); err != nil {
		return err
	}
	if w.lease, err = leaderelection.NewClient(w.admin.Config()); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	return w.core.Post().Resource("namespaces").Body(ns).Do(context.Background()).Error()
}

// coreClient is a client for core/v1 over cfg, in protobuf (JSON
// accepted back), as the replicas' informers read: the checker's watch
// decodes every ConfigMap event of the run, several times faster so than
// in JSON. (A merge patch's body stays JSON: it says its own type.)
func coreClient(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return restclient.New(cfg, corev1.SchemeGroupVersion, serializer.NewCodecFactory(scheme).WithoutConversion(), true)
}

// start runs a new replica in slot, with a new identity, until ctx ends
// or it is killed; it does nothing if the slot has a replica. The check
// and the start are one step under w.mu: a restart timer and the heal
// that fall at one instant would otherwise both see the slot empty and
// start two replicas in it, the first never stopped.
func (w *world) start(ctx context.Context, slot int) {
	w.mu.Lock()
	if w.replicas[slot] != nil {
		w.mu.Unlock()
		return
	}
	name := fmt.Sprintf("r%d-%d", slot, w.gens[slot])
	w.gens[slot]++
	l := w.links[slot]
	ctx, cancel := context.WithCancel(ctx)
	net := fakeapiserver.ServeInMemory(until(ctx, w.notingLooks(name, l.serve(w.flipDiscovery(name, logWrites(w.log.With("replica", name), w.keepingToRings(name, w.notingUnlabels(name, w.notingLeaderLeaseWrites(name, w.srv)))))))))
	cfg := net.Config()
	cfg.QPS, cfg.Burst = 50, 100
	r := &replica{name: name, slot: slot, link: l, net: net, cfg: cfg, cancel: cancel, done: make(chan struct{}), terms: map[string]*openTerm{}, sharders: map[string]*metrics.Memory{},
		boot: newBootTimes(w.opts.Seed, name)}
	w.replicas[slot] = r
	w.mu.Unlock()
	go func() {
		defer close(r.done)
		if !startAfter(ctx, &r.link.gate, r.boot.up()) {
			return // killed before it came up
		}
		w.hist.add(Event{What: Started, Replica: name})
		w.opts.Scenario.run(ctx, w, r)
	}()
}

// kill stops slot's replica and waits until all of it has stopped.
func (w *world) kill(slot int) {
	w.mu.Lock()
	r := w.replicas[slot]
	w.replicas[slot] = nil
	w.mu.Unlock()
	if r == nil {
		return
	}
	r.cancel()
	r.net.Close()  // requests in flight fail: the process is gone
	w.resume(slot) // a paused process dies too; its timers may run now, into a closed network
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<24)
		buf = buf[:runtime.Stack(buf, true)]
		w.hist.add(Event{What: Stuck, Replica: r.name, Detail: "did not stop within a minute of its kill"})
		if path := os.Getenv("SIM_STACKS"); path != "" {
			_ = os.WriteFile(path, buf, 0o644)
		}
		<-r.done
	}
	w.hist.add(Event{What: Stopped, Replica: r.name})
}

// running returns the replicas running now.
func (w *world) running() []*replica {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*replica
	for _, r := range w.replicas {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// clock is the replica's clock: the bubble's, at its slot's rate, with
// its pause.
func (r *replica) clock() informer.Clock { return slotClock{&r.link.gate, &r.link.rate} }

// onHistorysClock turns t, a time on r's clock (a Term's End), into the
// bubble's time, on which the history is kept: they differ by what the
// slot's Skews added (rate.bubbleTime).
func (r *replica) onHistorysClock(t time.Time) time.Time { return r.link.rate.bubbleTime(t) }

// setTerm records ring's open term of r (nil: none).
func (r *replica) setTerm(ring string, t *openTerm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == nil {
		delete(r.terms, ring)
		return
	}
	r.terms[ring] = t
}

func (r *replica) term(ring string) *openTerm {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.terms[ring]
}

// setSharder records whether this replica's sharder of ring leads, and
// the metrics it reports to.
func (r *replica) setSharder(ring string, leading bool, m *metrics.Memory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !leading {
		delete(r.sharders, ring)
		return
	}
	r.sharders[ring] = m
}

// sharder is the metrics of this replica's sharder of ring if it leads,
// else nil.
func (r *replica) sharder(ring string) *metrics.Memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sharders[ring]
}

// until ends every request's context when ctx ends: a killed replica's
// requests stop on the server's side too (closing an in-memory
// connection does not tell a handler that has not read its body).
func until(ctx context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		h.ServeHTTP(w, req.WithContext(rctx))
	})
}

// conflict has "another writer" change the object that write r is for:
// a merge PATCH of one annotation, straight to the server, so that r,
// guarded by the resourceVersion it read, meets a genuine 409 and the
// object's watchers see the change, as with a real conflicting writer.
func (w *world) conflict(r *http.Request) {
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ConflictAnnotation, strconv.FormatInt(w.conflicts.Add(1), 10))
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPatch, r.URL.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	rec := httptest.NewRecorder()
	w.notingLeaderLeaseWrites("a conflicting writer", w.srv).ServeHTTP(rec, req)
	w.log.Debug("simulation: a conflicting write", "path", r.URL.Path, "status", rec.Code)
}

// ConflictAnnotation is the annotation the simulated conflicting writer
// changes (see Errors with status 409).
const ConflictAnnotation = "sim.listwatch.dev/conflicting-write"

// breakStream records an event a term's handler got out of order.
func (w *world) breakStream(replica, ring, member, wrong string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.streamBroken = append(w.streamBroken, Violation{Invariant: "handler stream consistent", At: time.Now(),
		Text: fmt.Sprintf("replica %s ring %s member %s: its handler got %s", replica, ring, member, wrong)})
}
