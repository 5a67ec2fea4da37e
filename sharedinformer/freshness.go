package sharedinformer

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// How fresh the cache is. The cache is always a little late (pitfall 3):
// a write returns as soon as the API server has stored it, and the watch
// event that brings it to the cache comes after. These methods let a
// reader wait for the cache to reach a resourceVersion it knows of, such
// as the one its own write returned, instead of guessing with a sleep.
//
// Comparing two resourceVersions is promised only since Kubernetes 1.35
// (KEP-5504): within one resource, a larger integer is a later state.
// Before that they were opaque strings by contract, though etcd's are
// integers in practice; an aggregated API server may use anything.

// ErrNotComparable says that two resourceVersions cannot be ordered: one
// of them is not an integer as KEP-5504 describes them. Test for it with
// errors.Is; then compare an object's own resourceVersion for equality
// instead (this object at this version is in the cache).
var ErrNotComparable = errors.New("resourceVersions are not comparable")

// CompareResourceVersions returns -1, 0 or +1 as a is older than, the
// same as, or newer than b, or an error wrapping ErrNotComparable.
func CompareResourceVersions(a, b string) (int, error) {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return 0, fmt.Errorf("%w: %q and %q: %v", ErrNotComparable, a, b, err)
	}
	return c, nil
}

// Progress returns a channel closed the next time the cache applies a
// change or a bookmark, the moment LastSyncResourceVersion may have moved.
// Take it before you check what you wait for, and wait on it after.
func (i *Informer[T]) Progress() <-chan struct{} { return i.fifo.Progress() }

// WaitFor waits until the cache has applied resourceVersion rv or a later
// one (LastSyncResourceVersion ≥ rv), woken by each change the cache
// applies, never polling. A bookmark counts: it moves the cache to its
// resourceVersion with nothing to apply. It returns nil at once if the
// cache is there already; ctx's error, wrapped with how far the cache
// got, if ctx ends first; and an error wrapping ErrNotComparable if rv,
// or the cache's resourceVersion, is not an integer.
//
// The cache reaches rv when an event or bookmark at rv or later arrives.
// A write to an object the informer watches brings its own event at once;
// but if nothing the informer watches changes, only the API server's
// bookmarks move it, and those come about once a minute.
func (i *Informer[T]) WaitFor(ctx context.Context, rv string) error {
	for {
		progress := i.Progress()
		applied := i.LastSyncResourceVersion()
		// Before the first list there is nothing applied to compare with;
		// rv is still checked, so a bad one fails at once.
		c, err := CompareResourceVersions(cmp.Or(applied, rv), rv)
		if err != nil {
			return fmt.Errorf("sharedinformer: %s: waiting for resourceVersion %q: %w", i.name, rv, err)
		}
		if applied != "" && c >= 0 {
			return nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return fmt.Errorf("sharedinformer: %s: waiting for resourceVersion %s, the cache is at %q: %w", i.name, rv, applied, context.Cause(ctx))
		}
	}
}

// Fresh is a read barrier: it returns once the cache has applied the
// resourceVersion the API server was at when Fresh was called, so that it
// holds every change made before then. It asks for that resourceVersion,
// R, with the cheapest consistent read there is: a LIST of at most one
// object at resourceVersion "" (served from etcd, or since Kubernetes
// 1.31 from the watch cache once that has caught up with etcd). Then it
// waits for the cache to apply R (WaitFor).
//
// R is etcd's newest revision, which every write in the cluster moves,
// not only writes to what the informer watches. The cache reaches R with
// the first change in its scope after R, or with a bookmark, which the
// API server sends a watch about once a minute (and 2 s before it times
// out), and only if its watch cache has moved past what that watch was
// sent. On a quiet scope Fresh can therefore take a minute or more: it is
// a barrier for rare moments (the first reconciles after winning an
// election), bounded by ctx, not something to call in every reconcile.
// For your own writes, wait for the resourceVersions they returned
// (package readyourwrites): their own events bring those at once.
func (i *Informer[T]) Fresh(ctx context.Context) error {
	_, meta, err := i.opts.ListerWatcher.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("sharedinformer: %s: asking the API server for its resourceVersion: %w", i.name, err)
	}
	return i.WaitFor(ctx, meta.ResourceVersion)
}
