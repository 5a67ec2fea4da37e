package reflector_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/reflector"
)

// cyclingLW answers the second continue token with the first, so the
// tokens come round A→B→A→B: a list as endless as one whose token comes
// back unchanged, but never the same token twice in a row. After
// giveUpAfter continued pages it stops, so that a reflector that does not
// see the cycle still ends its list and the test can count the LISTs
// rather than hang.
type cyclingLW struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
	giveUpAfter int

	mu        sync.Mutex
	first     string // the first continue token the server gave
	second    string // the token it gave for first
	continued int
}

func (lw *cyclingLW) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	items, meta, err := lw.ListerWatcher.List(ctx, opts)
	if err != nil {
		return items, meta, err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	switch {
	case opts.Continue == "":
		if lw.first == "" {
			lw.first = meta.Continue
		}
	default:
		lw.continued++
		if lw.continued > lw.giveUpAfter {
			return items, meta, err
		}
		if opts.Continue == lw.first {
			if lw.second == "" {
				lw.second = meta.Continue
			}
			meta.Continue = lw.second
		} else if opts.Continue == lw.second {
			meta.Continue = lw.first // back to the start of the cycle
		}
	}
	return items, meta, err
}

// A continue token that comes back after another (A→B→A) makes the list
// as endless as a token answered with itself: the pages come round for
// ever, the reflector never syncs, and a store without parts gathers the
// same pages again and again. The guard of 3c22851 compares a token with
// the one just sent only, so it never fires: the reflector pages on until
// the server stops cycling (here after 100 continued pages).
func TestAContinueTokenThatComesRoundAgainEndsThePagingAndListsUnpaged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cms := newConfigMaps(t, s.mem.Config(), "default")
		const objects, pageSize = 6, 2
		for i := range objects {
			cms.create(fmt.Sprintf("cm-%d", i))
		}
		lw := &cyclingLW{ListerWatcher: typedConfigMapLW(t, s.config(), "default", false), giveUpAfter: 100}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
			ListerWatcher: lw, Store: store, OnError: errs.hook,
			Tuning: reflector.Tuning{PageSize: pageSize, BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		}))
		run(t, r)

		time.Sleep(time.Minute)
		synctest.Wait()
		lists := len(s.listTimes("configmaps"))
		require.Equal(t, 1, store.count("replace"), "never synced after %d LISTs", lists)
		assert.Len(t, store.state(), objects)
		assert.LessOrEqual(t, lists, 6, "a list whose tokens come round ends once they do, and the next is unpaged")
		assert.NotEmpty(t, errs.all(), "the endless list is reported")
	})
}
