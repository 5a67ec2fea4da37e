package sharding_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A call's budget for waiting on its cache after 409s is spent only by
// those waits, never by the waits for other calls in between. The ring
// key web's call lets go web-a and web-b, in that order. web-a's PATCH
// is refused and the cache already shows why (rv 21): retried and
// acknowledged at once. web-b is held by a call of its own key that
// reconciles it for longer than RequestTimeout; that reconcile wrote
// web-b (rv 32, still drained), which the member's watch brings 50 ms
// after web-b's PATCH at rv 31 is refused. Had web-a's 409 started a
// clock that the wait for the holder ran down, web-b would get one look
// and fail.
func TestAHolderWaitAfterAnEarlierObjects409DoesNotSpendALaterObjectsWaitForTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second)
		shard := sharding.Shard{Ring: ring, Member: "a"}
		webA := drainedWebChild(shard, "web-a", "uid-a", "20")
		webB := webChild(shard, "web-b", "uid-b", "30")
		idx, cms := cacheOf(t, webA, webB)
		drainedB := drainedAt(shard, webB, "31")

		srv := &scriptedServer{onPatch: func(_ int, body []byte) (int, []byte) {
			switch patchedRV(t, body) {
			case "20": // web-a was written just before; the cache already shows it
				cacheShows(t, idx, webA, "21")
				return http.StatusConflict, conflict
			case "21":
				return http.StatusOK, configMapJSON(t, webA)
			case "31": // the own key's reconcile wrote web-b: rv 32, seen 50 ms later
				cacheShowsAfter(t, 50*time.Millisecond, idx, drainedB, "32")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drainedB)
		}}
		ownB := holdKey(informer.KeyFor(webB))
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", ownB.reconcile)

		ownDone := goReconcile(ctx, reconcile, ownB.key)
		<-ownB.entered
		require.NoError(t, idx.Update(drainedB)) // the sharder drains web-b while its own key reconciles it
		ringDone := goReconcile(ctx, reconcile, webKey)
		synctest.Wait()
		require.Len(t, srv.patches(), 2, "precondition: web-a refused at rv 20 and acknowledged at rv 21; web-b waits for its own key's reconcile: %q", srv.patches())
		time.Sleep(sharding.DefaultRequestTimeout + time.Second) // a slow reconcile
		close(ownB.release)
		require.NoError(t, <-ownDone)
		require.NoError(t, <-ringDone,
			"web-b's 409, whose change the cache showed 50 ms later, failed: the call's budget, started by web-a's 409, was spent waiting for web-b's own key's reconcile (PATCHes %q)", srv.patches())
		require.Len(t, srv.patches(), 4, "web-b was not retried at the cache's rv 32: %q", srv.patches())
	})
}

// Shard.RequestTimeout's doc: a call waits for its cache after 409s one
// RequestTimeout in all, plus one look (cachePoll, 10 ms) after each
// refused object, so that a later object's change the cache shows at
// once is not failed for an earlier one's
// (TestALaterObjectsWaitAfterA409IsNotSpentByAnEarlierObjectsRefusal).
// A parent with 300 children drained at once, under a member whose watch
// stalled and every PATCH refused, waits no longer than that bound, and
// fails each child.
func TestACallsWaitsForTheCacheAreOneRequestTimeoutPlusALookPerRefusedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		const n = 300
		var children []*corev1.ConfigMap
		for i := range n {
			children = append(children, drainedWebChild(shard, "web-"+strconv.Itoa(i), types.UID("uid-"+strconv.Itoa(i)), strconv.Itoa(100+i)))
		}
		_, cms := cacheOf(t, children...)
		srv := &scriptedServer{onPatch: refuseAll} // the watch stalled
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", doNothing)
		const look = 10 * time.Millisecond
		bound := sharding.DefaultRequestTimeout + n*look
		start := time.Now()
		returned, err := callReturnsWithin(ctx, bound, reconcile, webKey)
		require.True(t, returned,
			"%v after it began, the call of web (%d children drained, all refused, the cache stalled) still waited for the cache, past RequestTimeout %v + %d looks of %v (PATCHes %d)",
			time.Since(start), n, sharding.DefaultRequestTimeout, n, look, len(srv.patches()))
		require.Len(t, srv.patches(), n, "each child is PATCHed once")
		require.Error(t, err)
		for i := range n {
			require.True(t, strings.Contains(err.Error(), "ns/web-"+strconv.Itoa(i)+":"), "web-%d's refusal is not a failure, retried", i)
		}
	})
}

// settableClock is an informer.Clock at an offset from the process's
// time that a test may move either way: a clock read from a wall-clock
// source (no monotonic reading) that NTP steps back, or a simulated
// clock that is reset. informer.Clock's doc asks nothing of its
// direction.
type settableClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *settableClock) AfterFunc(d time.Duration, f func()) informer.Timer {
	return time.AfterFunc(d, f)
}

func (c *settableClock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// Shard.RequestTimeout's doc (and docs/16): the waits of one call for
// its cache after 409s last "together for one RequestTimeout, on
// Shard.Clock or the process's time, whichever passes it first";
// TestTheWaitAfterA409EndsWhenTheShardsClockPassesRequestTimeout checks
// a wait ends within 100 ms once Shard.Clock is past RequestTimeout.
//
// a8e84f0 charges each wait clock.Now().Sub(start), unclamped. Here the
// shard's clock steps back an hour during web-a's wait (whose cache
// moves 20 ms later: acknowledged); that wait is charged -1h on the
// shard's clock. During web-b's wait (the cache never moves) the shard's
// clock then runs RequestTimeout+1s forward: web-b's wait alone has
// passed RequestTimeout on Shard.Clock, yet the refund keeps it waiting
// until the process's time passes RequestTimeout (~5 s). Passing: a wait
// never earns budget back (negative elapsed counts as 0), and web-b's
// wait ends at its next look.
func TestAWaitOnAShardClockSteppedBackDoesNotRefundTheCallsCacheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second)
		clock := &settableClock{}
		shard := sharding.Shard{Ring: ring, Member: "a", Clock: clock}
		webA, webB := drainedWebChild(shard, "web-a", "uid-web-a", "20"), drainedWebChild(shard, "web-b", "uid-web-b", "30")
		objs := map[string]*corev1.ConfigMap{"20": webA, "30": webB}
		idx, cms := cacheOf(t, webA, webB)
		var bWaitStarted time.Time
		srv := &scriptedServer{onPatch: func(_ int, body []byte) (int, []byte) {
			rv := patchedRV(t, body)
			cm := objs[rv]
			switch {
			case rv == "21":
				return http.StatusOK, configMapJSON(t, objs["20"])
			case cm != nil && cm.Name == "web-a": // written just before; seen 20 ms later, while the clock steps back
				go func() {
					time.Sleep(5 * time.Millisecond)
					clock.move(-time.Hour)
					time.Sleep(15 * time.Millisecond)
					cacheShows(t, idx, cm, "21")
				}()
				return http.StatusConflict, conflict
			case cm != nil && cm.Name == "web-b": // refused; the cache never moves; the shard's clock runs past RequestTimeout
				bWaitStarted = time.Now()
				go func() {
					time.Sleep(5 * time.Millisecond)
					clock.move(sharding.DefaultRequestTimeout + time.Second)
				}()
				return http.StatusConflict, conflict
			}
			return http.StatusConflict, conflict
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", doNothing)
		start := time.Now()
		_, err := reconcile(ctx, webKey)
		took := time.Since(start)
		require.Less(t, took, time.Second,
			"web-b's wait for the cache ran %v on the process's time although the shard's clock went %v forward during it alone, past RequestTimeout %v: web-a's wait, on a clock stepped back an hour, was charged -1h (PATCHes %q)",
			took-bWaitStarted.Sub(start), sharding.DefaultRequestTimeout+time.Second, sharding.DefaultRequestTimeout, srv.patches())
		require.ErrorContains(t, err, "ns/web-b")
		require.NotContains(t, err.Error(), "ns/web-a:")
	})
}
