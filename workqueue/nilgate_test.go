package workqueue_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/workqueue"
)

// New takes "a nil pointer held in [RateLimiter or Clock] (the
// *BucketRateLimiter of a constructor whose error was ignored, say)" as
// its default, since it "would otherwise fail at its first use". So does
// Run for its Gate: the *Guard of a readyourwrites.New whose error was
// ignored is no gate. (Found by a bug hunt: it crashed the process at the
// first key, from a worker goroutine no recover reaches.)
func TestRunTakesANilGuardHeldInItsGateAsNoGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var guard *readyourwrites.Guard // readyourwrites.New failed; its error ignored
		q := workqueue.New(workqueue.Options[informer.Key]{})
		reconciled := make(chan informer.Key, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			workqueue.Run(ctx, q, func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				reconciled <- key
				return workqueue.Result{}, nil
			}, workqueue.RunOptions[informer.Key]{Gate: guard})
		}()
		q.Add(informer.Key{Namespace: "shop", Name: "web"})
		assert.Equal(t, informer.Key{Namespace: "shop", Name: "web"}, <-reconciled)
		cancel()
		<-done
	})
}
