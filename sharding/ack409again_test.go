package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// An acknowledgement refused again at the version the cache shows (here
// by a webhook answering 409, with nothing changing web-env again) is a
// failure, retried: no event of a change will bring the key back, and
// web-env would stay drained here while its member lives.
func TestASecond409WhoseChangeTheCacheNeverShowsLeavesTheKeyRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			if n == 1 { // the reconcile wrote web-env; the cache already shows it
				moved := drained.DeepCopy()
				moved.ResourceVersion = "13"
				require.NoError(t, idx.Update(moved))
			}
			return http.StatusConflict, conflict // then a webhook refuses it: nothing changes
		}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		queue := workqueue.New(workqueue.Options[informer.Key]{})
		defer queue.ShutDown()
		key := informer.Key{Namespace: "ns", Name: "web"}
		queue.Add(key)
		go workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})
		time.Sleep(2 * sharding.DefaultRequestTimeout)
		synctest.Wait()
		require.GreaterOrEqual(t, len(srv.patches()), 3,
			"after a second 409 the cache never explained, web-env (still drained at rv 13) was given up with no error: the key was forgotten and never came back (PATCHes %q, queue.Len() %d, NumRequeues %d)",
			srv.patches(), queue.Len(), queue.NumRequeues(key))
	})
}

// Shard.RequestTimeout's doc: it "bounds how long one call of a
