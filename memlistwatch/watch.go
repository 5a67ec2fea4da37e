package memlistwatch

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// Watch opens a watch the way kube-apiserver does:
//
//   - resourceVersion "" or "0": one synthetic ADDED per current object (in
//     key order), then every later write.
//   - resourceVersion N: every write after N, then every later write. An N
//     older than the last Compact gets one ERROR event (410 Gone, reason
//     Expired) and the watch ends; an N newer than the latest write answers
//     "Too large resource version" (504) instead of a watch.
//   - sendInitialEvents=true (a streaming list; needs
//     resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true):
//     one ADDED per current object, then a BOOKMARK annotated
//     "k8s.io/initial-events-end: true" at the latest resourceVersion, then
//     every later write. After RefuseStreamingLists it answers 422 instead.
//   - allowWatchBookmarks: Bookmark sends this watch BOOKMARK events.
//   - timeoutSeconds: the watch ends after that long, as the server ends it.
//
// The watch also ends when ctx ends, on DropWatches and Disconnect, and when
// the caller calls Stop. Events are copies. While disconnected, Watch waits.
func (lw *ListerWatcher[T]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := lw.waitConnected(ctx); err != nil {
		return nil, err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.stats.Watches++
	if err := noSelectors(opts); err != nil {
		return nil, err
	}
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if streaming {
		if err := lw.checkStreamingLocked(opts); err != nil {
			return nil, err
		}
	}
	var from int64
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		var err error
		if from, err = lw.parseRV(opts.ResourceVersion); err != nil {
			return nil, err
		}
	}

	w := newWatcher(opts.AllowWatchBookmarks, func(w *watcher) {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		delete(lw.watchers, w)
	})
	switch {
	case streaming || from == 0:
		// The current state, as if each object had just been created.
		for _, key := range sortedKeys(lw.current) {
			w.push(watch.Event{Type: watch.Added, Object: lw.current[key]})
		}
		if streaming {
			end := newObject[T]()
			end.SetResourceVersion(strconv.FormatInt(lw.rv, 10))
			end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			w.push(watch.Event{Type: watch.Bookmark, Object: end})
		}
	case from < lw.compactedRV:
		w.push(watch.Event{Type: watch.Error, Object: expired(from, lw.compactedRV)})
		w.finish()
	default:
		for _, c := range lw.changesAfter(from) {
			w.push(event(c))
		}
	}
	if !w.finishing() {
		lw.watchers[w] = struct{}{}
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	go w.run(ctx, timeout)
	return w, nil
}

// checkStreamingLocked validates a streaming list request as the API
// server does, or refuses it after RefuseStreamingLists.
func (lw *ListerWatcher[T]) checkStreamingLocked(opts metav1.ListOptions) error {
	var errs field.ErrorList
	if lw.refuseStreaming {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
	} else {
		if opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "sendInitialEvents requires resourceVersionMatch=NotOlderThan"))
		}
		if !opts.AllowWatchBookmarks {
			errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"), "sendInitialEvents requires allowWatchBookmarks=true"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
}

// Bookmark sends a BOOKMARK event at the latest resourceVersion to every
// open watch that allowed bookmarks, as kube-apiserver does from time to
// time to tell a watcher how far it is, and returns how many it reached.
// The bookmark's object is an empty T with only that resourceVersion.
func (lw *ListerWatcher[T]) Bookmark() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n := 0
	for w := range lw.watchers {
		obj := newObject[T]()
		obj.SetResourceVersion(strconv.FormatInt(lw.rv, 10))
		if w.bookmarks && w.push(watch.Event{Type: watch.Bookmark, Object: obj}) {
			n++
		}
	}
	return n
}

// DropWatches ends every open watch at once, as a cut connection does:
// events not yet received are lost (a watch from the last resourceVersion
// received gets them again). It returns how many watches it ended.
func (lw *ListerWatcher[T]) DropWatches() int {
	lw.mu.Lock()
	ws := lw.watchers
	lw.watchers = map[*watcher]struct{}{}
	lw.mu.Unlock()
	for w := range ws {
		w.Stop()
	}
	return len(ws)
}

// Disconnect drops every open watch and makes later List and Watch calls
// wait, as requests to an unreachable server hang, until Reconnect or
// their context ends. Writes still succeed meanwhile: the server is fine,
// only this client cannot reach it.
func (lw *ListerWatcher[T]) Disconnect() {
	lw.mu.Lock()
	if lw.reconnected == nil {
		lw.reconnected = make(chan struct{})
	}
	lw.mu.Unlock()
	lw.DropWatches()
}

// Reconnect ends a Disconnect: waiting calls proceed with the options they
// were made with.
func (lw *ListerWatcher[T]) Reconnect() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.reconnected != nil {
		close(lw.reconnected)
		lw.reconnected = nil
	}
}

// waitConnected returns at once unless disconnected; then it waits for
// Reconnect or ctx.
func (lw *ListerWatcher[T]) waitConnected(ctx context.Context) error {
	lw.mu.Lock()
	ch := lw.reconnected
	lw.mu.Unlock()
	if ch == nil {
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// event turns a write into the watch event that reports it.
func event[T informer.Object](c change[T]) watch.Event {
	return watch.Event{Type: c.typ, Object: c.obj}
}

// expired is the ERROR event's object for a watch from a compacted
// resourceVersion, worded like etcd's answer through kube-apiserver.
func expired(from, compacted int64) *metav1.Status {
	status := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, compacted)).Status()
	return &status
}
