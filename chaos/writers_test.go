package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// writers create, update and delete src-0 … src-(names-1) at random,
// straight to the apiserver (not through the fault proxy), so the
// collection keeps changing while the informer is cut off: some objects
// are created and deleted within one outage, and some deletions are seen
// only by the next relist.
type writers struct {
	ns     string
	client *rest.RESTClient
	names  int

	ok, failed atomic.Int64
}

// run runs one writer until ctx ends, with its own random source.
func (w *writers) run(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		name := fmt.Sprintf("%s%d", srcPrefix, rng.IntN(w.names))
		value := fmt.Sprint(rng.Uint32())
		var err error
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		switch p := rng.IntN(10); {
		case p < 4:
			err = w.client.Post().Namespace(w.ns).Resource("configmaps").Body(&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value},
			}).Do(reqCtx).Error()
		case p < 8:
			err = w.client.Patch(types.MergePatchType).Namespace(w.ns).Resource("configmaps").Name(name).
				Body(fmt.Appendf(nil, `{"data":{"v":%q}}`, value)).Do(reqCtx).Error()
		default:
			err = w.client.Delete().Namespace(w.ns).Resource("configmaps").Name(name).Do(reqCtx).Error()
		}
		cancel()
		// AlreadyExists and NotFound are expected among random writers, and
		// the apiserver is sometimes restarting: every outcome is fine.
		if err != nil {
			w.failed.Add(1)
		} else {
			w.ok.Add(1)
		}
		sleep(ctx, time.Duration(5+rng.IntN(35))*time.Millisecond)
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
