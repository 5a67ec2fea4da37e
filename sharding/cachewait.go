package sharding

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
)

// errCacheStill says a member's cache did not show, within its wait, the
// change the API server refused an acknowledgement for.
var errCacheStill = errors.New("the member's cache did not show the change a 409 reported")

// cacheMoves waits, within budget, until the cache's object at key is
// not at resourceVersion rv any more, and returns it (nil if the cache
// holds none: it left). It looks every cachePoll on the process's time,
// not on shard's Clock, which a test or the simulator may hold still: the
// cache moves with the watch, not with that clock
// (TestAnAcknowledgementRetriedAfterA409DoesNotWaitForTheShardsClockToBeStepped).
// It fails with errCacheStill once the budget is spent, or with ctx's
// error when ctx ends
// (TestAnAcknowledgementCutShortByItsCtxWhileWaitingForTheCacheLeavesItsKeyQueued).
func cacheMoves(ctx context.Context, budget *cacheBudget, key informer.Key, rv string, cached func(informer.Key) (metav1.Object, bool)) (metav1.Object, error) {
	wait := budget.begin()
	defer wait.end()
	for looked := false; ; looked = true {
		now, ok := cached(key)
		switch {
		case !ok:
			return nil, nil
		case now.GetResourceVersion() != rv:
			return now, nil
		case looked && wait.spent(): // one look after the 409 at least
			return nil, errCacheStill
		}
		t := time.NewTimer(cachePoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// cacheBudget is how long one call of a Reconciler may wait for its
// cache after 409s, all its waits together: RequestTimeout, on shard's
// Clock or on the process's time, whichever passes it first, and a look
// of cachePoll after each 409 however much is left. Only those waits
// spend it: not the waits for other calls in between, nor the requests
// (TestTheWaitAfterA409EndsWhenTheShardsClockPassesRequestTimeout,
// TestACallsWaitsForTheCacheAfter409sDoNotAddUpPerObject,
// TestACallWhoseOwnObjectAndAnotherAreDrainedWaitsForTheCacheOneRequestTimeoutInAll,
// TestAHolderThatReconcilesLongerThanRequestTimeoutDoesNotSpendTheWaitAfterA409,
// TestAHolderWaitAfterAnEarlierObjects409DoesNotSpendALaterObjectsWaitForTheCache,
// TestALaterObjectsWaitAfterA409IsNotSpentByAnEarlierObjectsRefusal,
// TestACallsWaitsForTheCacheAreOneRequestTimeoutPlusALookPerRefusedObject).
// A call's own goroutine alone uses it.
type cacheBudget struct {
	shard           Shard
	byClock, bySelf time.Duration // spent so far, on each clock
}

// cacheWait is one wait of a call for its cache, spending its budget.
type cacheWait struct {
	budget                *cacheBudget
	clock                 informer.Clock
	clockStart, selfStart time.Time
}

// begin starts a wait.
func (b *cacheBudget) begin() cacheWait {
	clock := informer.ClockOrReal(b.shard.Clock) // a nil pointer held in it too (TestANilPointerHeldInShardClockIsTheRealClockAfterA409)
	return cacheWait{budget: b, clock: clock, clockStart: clock.Now(), selfStart: time.Now()}
}

// spent reports whether the budget's waits, this one included, have
// passed RequestTimeout on either clock.
func (w cacheWait) spent() bool {
	limit := w.budget.shard.requestTimeout()
	byClock, bySelf := w.elapsed()
	return w.budget.byClock+byClock >= limit || w.budget.bySelf+bySelf >= limit
}

// end charges the wait to its budget.
func (w cacheWait) end() {
	byClock, bySelf := w.elapsed()
	w.budget.byClock += byClock
	w.budget.bySelf += bySelf
}

// elapsed is how long the wait has taken on each clock. A Shard.Clock
// stepped back during it counts as no time: a wait never gives budget
// back (TestAWaitOnAShardClockSteppedBackDoesNotRefundTheCallsCacheBudget).
func (w cacheWait) elapsed() (byClock, bySelf time.Duration) {
	return max(0, w.clock.Now().Sub(w.clockStart)), time.Since(w.selfStart)
}

// cachePoll is how often acknowledge looks at the cache after a 409.
const cachePoll = 10 * time.Millisecond
