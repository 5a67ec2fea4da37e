package sharding_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// Reconciler marks another object's refused acknowledgement
// KeepRetrying, and since 2d316de a KeepRetrying error with a sooner
// Result.RequeueAfter comes back at the RequeueAfter instead of the
// backoff. So a reconcile that polls (Result{RequeueAfter: 10ms}, nil:
// "look again soon", which on its own is the user's business) turns
// web-env's refused PATCH (a webhook that refuses it, for good) into one
// PATCH every 10 ms, past both the per-key backoff (5 ms doubling) and
// the default limiter's overall 10 qps bucket: AddAfter is not rate
// limited. Before, the error won over the Result and the PATCHes backed
// off: about 14 in a minute.
func TestARefusedAcknowledgementBacksOffEvenWhenTheKeysReconcileAsksToComeBackSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runEnvMember(t, func(int32) bool { return true }, // refused for good
			func(context.Context, informer.Key) (workqueue.Result, error) {
				return workqueue.Result{RequeueAfter: 10 * time.Millisecond}, nil // poll
			}, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.Less(t, m.patches.Load(), int32(60),
			"web-env's refused acknowledgement was sent again at the reconcile's 10 ms poll, not at the queue's backoff")
	})
}
