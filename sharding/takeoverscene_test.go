package sharding_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// takeoverScene is the cast of the stale-poll tests, in a synctest
// bubble: a sharder, a member m1 and a member x, twenty ConfigMaps
// assigned between the two, and then x cut off so that the sharder takes
// its Lease over. Each test wraps the fake server in its own handler to
// hold a poll's answer back across the takeover; the scene records every
// label the sharder writes toward x after the takeover, which must be
// none.
type takeoverScene struct {
	xID           atomic.Value // string: x's member id, once x has joined
	xCut          atomic.Bool  // x's requests fail: it can neither renew nor release
	afterTakeover atomic.Bool  // the takeover of x's Lease has been answered

	mu  sync.Mutex
	bad []string // labels and drains toward x after the takeover
}

func newTakeoverScene() *takeoverScene {
	s := &takeoverScene{}
	s.xID.Store("")
	return s
}

// x returns x's member id, "" until x has joined.
func (s *takeoverScene) x() string { return s.xID.Load().(string) }

// fromX reports whether r is x's request; once x is cut, it also answers
// it with a 503 and reports true.
func (s *takeoverScene) fromX(w http.ResponseWriter, r *http.Request) (x, answered bool) {
	x = r.UserAgent() == "member-x"
	if x && s.xCut.Load() {
		http.Error(w, "cut", http.StatusServiceUnavailable)
		return true, true
	}
	return x, false
}

// start runs the sharder and both members on mem until ctx ends (wg
// waits for them), creates the ConfigMaps and waits, on the bubble's
// clock, until the sharder has assigned them.
func (s *takeoverScene) start(ctx context.Context, t *testing.T, wg *sync.WaitGroup, mem *fakeapiserver.InMemory) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sharder := must(sharding.NewSharder(sharding.SharderConfig{Config: mem.Config(), LeaseClient: must(leaderelection.NewClient(mem.Config())),
		LeaseNamespace: "default", Ring: ring, Identity: "sharder",
		Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: "default",
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet,
		OnLabel: func(action string, key informer.Key, member string) {
			if s.afterTakeover.Load() && member != "" && member == s.x() {
				s.mu.Lock()
				s.bad = append(s.bad, fmt.Sprintf("%s %s toward %s", action, key.Name, member))
				s.mu.Unlock()
			}
		}}))
	wg.Go(func() { _ = sharder.Run(ctx) })
	member := func(name string, cfg *rest.Config) <-chan string {
		id := make(chan string, 1)
		m := must(sharding.NewMember(sharding.MemberConfig{Client: must(leaderelection.NewClient(cfg)), Namespace: "default", Ring: ring, Name: name,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet,
			Run: func(ctx context.Context, shard sharding.Shard) {
				select {
				case id <- shard.Member:
				default:
				}
				<-ctx.Done()
			}}))
		wg.Go(func() { _ = m.Run(ctx) })
		return id
	}
	m1 := member("m1", mem.Config())
	xCfg := mem.Config()
	xCfg.UserAgent = "member-x"
	x := member("x", xCfg)
	<-m1
	s.xID.Store(<-x)
	admin := must(testenv.CoreV1Client(mem.Config()))
	for i := range 20 {
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").
			Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%02d", i)}}).Do(ctx).Error())
	}
	time.Sleep(4 * leaseDuration) // the sharder is elected and assigns every object to m1 or x
}

// cutX cuts x off, waits up to within for the takeover of its Lease to
// be answered (tookOver closes), then four lease durations more for
// anything the sharder would do toward x.
func (s *takeoverScene) cutX(t *testing.T, tookOver <-chan struct{}, within time.Duration) {
	s.xCut.Store(true)
	select {
	case <-tookOver:
	case <-time.After(within):
		t.Fatal("no takeover of x's Lease")
	}
	time.Sleep(4 * leaseDuration)
}

// requireNothingTowardX fails if the sharder labelled or drained
// anything toward x after the takeover.
func (s *takeoverScene) requireNothingTowardX(t *testing.T, after string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.bad, "objects were labelled or drained toward x after its Lease was %s", after)
}

// heldPoll holds the sharder's next poll of the ring's Leases back
// across a write (a takeover, a collection's delete): the write waits,
// within its timeout, until a poll has read the Leases from before it,
// and that poll's answer reaches the sharder only after the write's
// answer, late, as a slow network may deliver it.
type heldPoll struct {
	mu       sync.Mutex
	pending  chan struct{} // guarded by mu; a write waiting for a poll's read
	heldBack atomic.Bool   // a poll was answered from before a write
}

// write serves the write r once a poll has read the state before it, or
// after 1.2 s (within the request's timeout).
func (p *heldPoll) write(w http.ResponseWriter, r *http.Request, srv http.Handler) {
	ch := make(chan struct{})
	p.mu.Lock()
	p.pending = ch
	p.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(1200 * time.Millisecond):
	}
	srv.ServeHTTP(w, r)
}

// poll reports false unless r is a poll of the ring's Leases and a write
// waits for one. Then it reads the Leases, lets the write go, waits for
// until to return (the write answered, and whatever should come first)
// and answers r with what it read.
func (p *heldPoll) poll(w http.ResponseWriter, r *http.Request, srv http.Handler, until func()) bool {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/leases") || r.URL.Query().Get("labelSelector") == "" {
		return false
	}
	p.mu.Lock()
	ch := p.pending
	p.pending = nil
	p.mu.Unlock()
	if ch == nil {
		return false
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r) // the Leases before the write
	p.heldBack.Store(true)
	close(ch)
	until()
	copyRecorded(w, rec)
	return true
}
