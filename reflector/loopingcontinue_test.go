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

// loopingLW answers every continued LIST page with the continue token it
// was given: a server bug (or a proxy that strips the token's progress)
// that makes a paged list endless.
type loopingLW struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
}

func (lw loopingLW) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	items, meta, err := lw.ListerWatcher.List(ctx, opts)
	if err == nil && opts.Continue != "" && meta.Continue != "" {
		meta.Continue = opts.Continue
	}
	return items, meta, err
}

// A server that answers a continue token with the same token would have
// the reflector page for ever, gathering the same page again and again.
// The list fails instead, with an error that says so, and the next one
// asks for the whole collection in one response, which syncs.
func TestAContinueTokenAnsweredWithItselfEndsThePagingAndListsUnpaged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cms := newConfigMaps(t, s.mem.Config(), "default")
		const objects, pageSize = 6, 2
		for i := range objects {
			cms.create(fmt.Sprintf("cm-%d", i))
		}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
			ListerWatcher: loopingLW{typedConfigMapLW(t, s.config(), "default", false)}, Store: store, OnError: errs.hook,
			Tuning: reflector.Tuning{PageSize: pageSize, BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		}))
		run(t, r)

		time.Sleep(time.Minute)
		synctest.Wait()
		lists := len(s.listTimes("configmaps"))
		require.Equal(t, 1, store.count("replace"), "never synced after %d LISTs", lists)
		assert.Len(t, store.state(), objects)
		assert.LessOrEqual(t, lists, 4, "the first page, the looping one, and one unpaged LIST")
		require.NotEmpty(t, errs.all())
		assert.ErrorContains(t, errs.all()[0], "continue token this list had sent already")
	})
}
