package reflector_test

import (
	"context"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// spy wraps a ListerWatcher, records the options of every call, and lets a
// test answer a call in its place.
type spy[T informer.Object] struct {
	inner reflector.ListerWatcher[T]

	mu      sync.Mutex
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	// onList, if set, is asked first; a non-nil error is returned instead
	// of calling inner. call counts from 1.
	onList func(call int, opts metav1.ListOptions) error
	// onWatch, if set, is asked first; a non-nil watch or error is
	// returned instead of calling inner.
	onWatch func(call int, opts metav1.ListOptions) (watch.Interface, error)
}

func (s *spy[T]) List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	s.mu.Lock()
	s.lists = append(s.lists, opts)
	call, hook := len(s.lists), s.onList
	s.mu.Unlock()
	if hook != nil {
		if err := hook(call, opts); err != nil {
			return nil, metav1.ListMeta{}, err
		}
	}
	return s.inner.List(ctx, opts)
}

func (s *spy[T]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	s.watches = append(s.watches, opts)
	call, hook := len(s.watches), s.onWatch
	s.mu.Unlock()
	if hook != nil {
		if w, err := hook(call, opts); w != nil || err != nil {
			return w, err
		}
	}
	return s.inner.Watch(ctx, opts)
}

func (s *spy[T]) listCalls() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lists)
}

func (s *spy[T]) watchCalls() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watches)
}
