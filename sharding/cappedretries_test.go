package sharding_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// A member whose queue caps retries (RunOptions.MaxRetries, as client-go's
// sample controller does with maxRetries = 5) must still let a drained
// object go once a brief fault is over: "either way of keying lets every
// drained object go while its member lives", and withOthers' promise
// that the key comes back while another object's acknowledgement failed.
// Here the API server refuses web-env's acknowledgement six times (a
// blip of well under a second at the queue's backoff), then accepts
// every PATCH. The ring key's own reconcile succeeds every time.
func TestADrainWhoseAcknowledgementFailedBrieflyIsLetGoUnderACappedRetryQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runEnvMember(t, func(n int32) bool { return n <= 6 }, doNothing, // a transient fault, web's own reconcile succeeds
			workqueue.RunOptions[informer.Key]{MaxRetries: 5, OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after its acknowledgement was refused 6 times: the queue gave its key up (%d PATCHes of web-env, %d keys given up)",
			m.patches.Load(), m.queue.GaveUp())
	})
}
