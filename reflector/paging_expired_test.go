package reflector_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/reflector"
)

// compactingLW compacts the fake API server after every LIST page that
// has a next page, after writes elsewhere, so that the page's continue
// token is always expired by the time it is used: a collection too
// large to page through between two compactions.
type compactingLW struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
	t     *testing.T
	srv   *fakeServer
	other *configMaps // writes here move the server's resourceVersion past the token's
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
		lw.srv.Compact(lw.srv.ResourceVersion())
	}
	return items, meta, err
}

// A collection too large to page through between two compactions: every
// continue token has expired by the time it is used. Paging gives up and
// one unpaged LIST succeeds, instead of paging again and again. On the
// fake API server, in a synctest bubble; its 410 for an expired continue
// token is held to the real one's (with the watch cache off) by
// fakeapiserver's conformance test.
func TestPagedListThatAlwaysExpiresFallsBackToOneUnpagedList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cms := newConfigMaps(t, s.mem.Config(), "default")
		const objects, pageSize = 6, 2
		for i := range objects {
			cms.create(fmt.Sprintf("cm-%d", i))
		}
		lw := &compactingLW{
			ListerWatcher: typedConfigMapLW(t, s.config(), "default", false),
			t:             t, srv: s, other: newConfigMaps(t, s.mem.Config(), "kube-public"),
		}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
			ListerWatcher: lw, Store: store, OnError: errs.hook,
			Tuning: reflector.Tuning{PageSize: pageSize, BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		}))
		run(t, r)

		time.Sleep(time.Minute) // far past any backoff: a loop would have listed hundreds of times
		synctest.Wait()
		lists := len(s.listTimes("configmaps"))
		t.Logf("%d LISTs, %d errors", lists, len(errs.all()))
		require.Equal(t, 1, store.count("replace"), "never synced after %d LISTs (%d errors)", lists, len(errs.all()))
		assert.Len(t, store.state(), objects)
		pages := objects / pageSize
		assert.LessOrEqual(t, lists, pages+2, "at most pages + 2 LISTs: paging gives up, one unpaged LIST succeeds")
	})
}
