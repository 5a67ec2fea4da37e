package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// partRecorder is a recorder that is also a PartStore, and logs the
// calls of each replacement in order: "begin", "part 2", "finish 6".
type partRecorder[T informer.Object] struct {
	*recorder[T]
	logMu sync.Mutex
	log   []string
}

var _ reflector.PartStore[*corev1.ConfigMap] = (*partRecorder[*corev1.ConfigMap])(nil)

func (s *partRecorder[T]) BeginReplace() error { s.note("begin"); return nil }

func (s *partRecorder[T]) ReplacePart(objs []T) error {
	s.note(fmt.Sprintf("part %d", len(objs)))
	for _, obj := range objs {
		if err := s.put("part", obj); err != nil {
			return err
		}
	}
	return nil
}

func (s *partRecorder[T]) FinishReplace(rv string) error { s.note("finish " + rv); return nil }

func (s *partRecorder[T]) Empty() error { s.note("empty"); return nil }

func (s *partRecorder[T]) note(call string) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.log = append(s.log, call)
}

func (s *partRecorder[T]) calls() []string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return slices.Clone(s.log)
}

func TestAPartStoreGetsEveryPageAsItArrives(t *testing.T) {
	store := &partRecorder[*corev1.ConfigMap]{recorder: newRecorder[*corev1.ConfigMap]()}
	f := startMem(t, 5, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.PageSize = 2
		o.Store = store
	})
	assert.Equal(t, []string{"begin", "part 2", "part 2", "part 1", "finish 6"}, store.calls())
	assert.Zero(t, store.count("replace"), "a PartStore is never handed the whole list")
	assert.Len(t, store.state(), 5)
	assert.Equal(t, "6", f.r.LastSyncResourceVersion())
}

func TestAListCutShortIsBegunAgainAndNeverFinished(t *testing.T) {
	lw, s := expiringOnce(t)
	store := &partRecorder[*corev1.ConfigMap]{recorder: newRecorder[*corev1.ConfigMap]()}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store,
		Tuning: reflector.Tuning{PageSize: 2, ExpiredContinueLimit: 2}, OnError: (&errorLog{}).hook})))
	run(t, r)
	eventually(t, func() bool { return r.LastSyncResourceVersion() == lw.ResourceVersion() }, "never synced")
	assert.Equal(t, []string{
		"begin", "part 2", // the first page; then the continue token expired
		"begin", "part 2", "part 2", "part 2", "finish " + lw.ResourceVersion(),
	}, store.calls(), "the list cut short gets no finish: the store derives no deletion from it")
}

// pagesInParts reads a collection as a PartLister: it hands each page
// over one object at a time, and notes in the store's log where each
// page's request ends.
type pagesInParts struct {
	*memlistwatch.ListerWatcher[*corev1.ConfigMap]
	store *partRecorder[*corev1.ConfigMap]
}

var _ reflector.PartLister[*corev1.ConfigMap] = pagesInParts{}

func (p pagesInParts) ListInParts(ctx context.Context, opts metav1.ListOptions, part func([]*corev1.ConfigMap) error) (metav1.ListMeta, error) {
	items, meta, err := p.List(ctx, opts)
	if err != nil {
		return meta, err
	}
	for _, item := range items {
		if err := part([]*corev1.ConfigMap{item}); err != nil {
			return meta, err
		}
	}
	p.store.note("end of page")
	return meta, nil
}

func TestAPartStoreGetsEachPartOfAPartListersPageAsItArrives(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	for i := range 5 {
		_, err := lw.Create(cm("default", fmt.Sprintf("cm-%d", i)))
		require.NoError(t, err)
	}
	store := &partRecorder[*corev1.ConfigMap]{recorder: newRecorder[*corev1.ConfigMap]()}
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: pagesInParts{lw, store}, Store: store,
		Tuning: reflector.Tuning{PageSize: 2}}))
	run(t, r)
	eventually(t, func() bool { return r.LastSyncResourceVersion() == lw.ResourceVersion() }, "never synced")
	assert.Equal(t, []string{
		"begin",
		"part 1", "part 1", "end of page",
		"part 1", "part 1", "end of page",
		"part 1", "end of page",
		"finish 6",
	}, store.calls(), "each part reaches the store before its page's request has ended")
	assert.Zero(t, store.count("replace"))
}
