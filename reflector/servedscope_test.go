package reflector_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/reflector"
)

// A CRD deleted, then created again cluster-scoped under a reflector of
// one namespace: discovery's answer goes from "gone" to "listed, but
// cluster-scoped". Both mean the same for the store (nothing of the
// namespace exists), so the change is no news: ErrNotServed is reported
// once, and the store emptied once. (A review proved that the change was
// reported, and the store emptied, a second time.)
func TestAGoneResourceCreatedAgainClusterScopedIsReportedOnce(t *testing.T) {
	var state atomic.Int32 // 0 served, 1 gone, 2 cluster-scoped
	var asked atomic.Int32
	served := func(context.Context) (reflector.Serving, error) {
		asked.Add(1)
		switch state.Load() {
		case 1:
			return reflector.Serving{Version: "v1"}, nil
		case 2:
			return reflector.Serving{Version: "v1", ClusterScoped: true}, nil
		}
		return reflector.Serving{Served: true, Version: "v1"}, nil
	}
	f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.Served = served
		o.ShortWatch = time.Nanosecond
	})
	answer404When(f, func() bool { return state.Load() != 0 })
	state.Store(1)
	f.lw.DropWatches()
	eventually(t, func() bool { return len(f.trace.of(reflector.KindNotServed)) == 1 }, "never reported gone")
	state.Store(2)
	n := asked.Load()
	eventually(t, func() bool { return asked.Load() >= n+4 }, "not asked again")
	assert.Len(t, f.errs.all(), 1, "ErrNotServed is reported once: %v", f.errs.all())
	assert.Len(t, f.trace.of(reflector.KindNotServed), 1)
	assert.Len(t, f.store.replaces(), 2, "the first list, and one emptying: %v", f.store.replaces())
}
