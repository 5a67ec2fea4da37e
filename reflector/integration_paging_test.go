package reflector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// compactingLW compacts etcd after every LIST page that has a next page,
// after writes elsewhere, so that the page's continue token is always
// expired by the time it is used: a collection too large to page through
// between two compactions.
type compactingLW struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
	t     *testing.T
	cp    *testenv.ControlPlane
	other *configMaps // writes here move etcd's revision past the token's
	n     int
}

func (lw *compactingLW) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	items, meta, err := lw.ListerWatcher.List(ctx, opts)
	if err == nil && meta.Continue != "" {
		// Not require/Fatal here: this runs on the reflector's goroutine.
		lw.n++
		for _, suffix := range []string{"a", "b"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d-%s", lw.n, suffix)}}
			if werr := lw.other.client.Post().Namespace(lw.other.ns).Resource("configmaps").Body(cm).Do(ctx).Error(); werr != nil {
				lw.t.Errorf("writing elsewhere: %v", werr)
				return nil, metav1.ListMeta{}, werr
			}
		}
		if _, cerr := lw.cp.Compact(ctx); cerr != nil {
			lw.t.Errorf("compacting etcd: %v", cerr)
			return nil, metav1.ListMeta{}, cerr
		}
	}
	return items, meta, err
}

func TestPagedListThatAlwaysExpiresFallsBackToOneUnpagedList(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true, Audit: true})
	ns, otherNS := cp.Namespace(t), cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	const objects, pageSize = 6, 2
	for i := range objects {
		cms.create(fmt.Sprintf("cm-%d", i))
	}
	ua := agent(t)
	lw := &compactingLW{
		ListerWatcher: typedConfigMapLW(t, withAgent(cp.Config(), ua), ns, false),
		t:             t, cp: cp, other: newConfigMaps(t, cp.Config(), otherNS),
	}
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: lw, Store: store, OnError: errs.hook,
		Tuning: reflector.Tuning{PageSize: pageSize, BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
	}))
	run(t, r)

	deadline := time.Now().Add(30 * time.Second)
	for store.count("replace") == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	lists := countRequests(t, cp, ua, "list")
	require.Equal(t, 1, store.count("replace"), "never synced after %d LISTs (%d errors)", lists, len(errs.all()))
	assert.Len(t, store.state(), objects)
	pages := objects / pageSize
	assert.LessOrEqual(t, lists, pages+2, "at most pages + 2 LISTs: paging gives up, one unpaged LIST succeeds")
}
