package fakeapiserver

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BookmarkInterval is how often an open watch that allows bookmarks gets
// one when nothing else is due, as kube-apiserver's watch cache sends
// them "roughly every minute"; it also sends one 2 s before the watch's
// timeoutSeconds ends it.
const BookmarkInterval = time.Minute

// serveWatch answers a WATCH as kube-apiserver does:
//
//   - resourceVersion "" or "0": one ADDED per current object (key order),
//     then every later write.
//   - resourceVersion N: every write after N. If N+1 is older than the
//     last compaction, or, for a custom resource, N is older than its
//     CRD's latest install or move (its watch cache starts afresh), one
//     ERROR event (410 Gone, reason Expired) and the watch ends. An N
//     newer than the latest write opens at once and gets the writes
//     after N only.
//   - sendInitialEvents=false (resourceVersionMatch=NotOlderThan) from
//     "0" or none: no initial events, every write after the latest.
//   - sendInitialEvents=true (resourceVersionMatch=NotOlderThan): one
//     ADDED per current object, then, if allowWatchBookmarks, a BOOKMARK
//     annotated "k8s.io/initial-events-end: true" at the state's
//     resourceVersion; an N newer than the latest write is an ERROR event,
//     504 "Too large resource version".
//   - allowWatchBookmarks: a BOOKMARK at the latest resourceVersion every
//     BookmarkInterval, and 2 s before timeoutSeconds ends the watch, each
//     only if the server has moved past where the watch started.
//   - timeoutSeconds: the server ends the watch after that long.
//
// The watch also ends when the client goes, on CutWatches, and when its
// resource stops being served (RemoveCRD, MoveCRD).
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, res Resource, f format, filt filter, opts metav1.ListOptions) {
	wt := newWatcher(res.GroupResource(), filt, opts.AllowWatchBookmarks)
	if err := s.openWatch(wt, res, opts); err != nil {
		writeError(w, f, err)
		return
	}
	defer s.closeWatch(wt)

	var deadline <-chan time.Time
	var end time.Time
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		d := time.Duration(*opts.TimeoutSeconds) * time.Second
		end = time.Now().Add(d)
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	var bookmarkTimer *time.Timer
	var bookmarkDue <-chan time.Time
	scheduleBookmark := func() {
		next := time.Now().Add(BookmarkInterval)
		if !end.IsZero() && end.Add(-2*time.Second).Before(next) {
			next = end.Add(-2 * time.Second)
		}
		if !wt.bookmarks || !next.After(time.Now()) {
			bookmarkDue = nil
			return
		}
		bookmarkTimer = time.NewTimer(time.Until(next))
		bookmarkDue = bookmarkTimer.C
	}
	scheduleBookmark()
	defer func() {
		if bookmarkTimer != nil {
			bookmarkTimer.Stop()
		}
	}()

	contentType := mediaJSON
	if f.protobuf {
		contentType = mediaProtobuf + ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		items, ending := wt.take()
		for _, it := range items {
			frame, err := s.encodeItem(f, res, it)
			if err != nil {
				return
			}
			if _, err := w.Write(frame); err != nil {
				return
			}
		}
		if len(items) > 0 && flusher != nil {
			flusher.Flush()
		}
		if ending {
			return
		}
		select {
		case <-wt.wake:
		case <-wt.done:
			return
		case <-r.Context().Done():
			return
		case <-deadline:
			return
		case <-bookmarkDue:
			wt.bookmark(s.ResourceVersion())
			scheduleBookmark()
		}
	}
}

// openWatch validates opts, queues the watch's first events and
// registers it for the writes that follow, all under one lock so no
// write falls between, nor the removal of res.
func (s *Server) openWatch(wt *watcher, res Resource, opts metav1.ListOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return err
	}
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	var from int64
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		n, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
		if err != nil {
			return unparsableWatchVersion(opts.ResourceVersion, err)
		}
		from = int64(min(n, math.MaxInt64)) // beyond any version this server will reach
	}
	switch {
	case streaming && from > s.rv:
		wt.fail(tooLargeResourceVersion(from, s.rv))
		return nil
	case from == 0 && opts.SendInitialEvents != nil && !streaming:
		// sendInitialEvents=false: the watch cache starts at its latest
		// resourceVersion, with no initial events
		// (TestConformanceWatchWithoutInitialEvents).
		wt.startRV = s.rv
	case streaming || from == 0:
		state := s.current[wt.gr]
		for _, key := range sortedKeys(state) {
			if wt.filter.matches(state[key]) {
				wt.push(watchItem{typ: added, obj: state[key]})
			}
		}
		wt.startRV = s.rv
		if streaming && opts.AllowWatchBookmarks {
			wt.push(watchItem{typ: bookmark, obj: bookmarkObject(s.rv, true)})
		}
	case from < s.compactedRV-1: // not from+1, which overflows at the largest from
		wt.fail(apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old."))
		return nil
	case from < s.cacheStart[wt.gr]:
		// A custom resource's watch cache, built anew when its CRD was
		// installed or moved, starts at the resourceVersion of its first
		// list: it has no events from before.
		wt.fail(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.cacheStart[wt.gr])))
		return nil
	default:
		wt.startRV = from
		for _, c := range s.changesAfterLocked(from) {
			wt.offer(c)
		}
	}
	s.watchers[wt] = struct{}{}
	return nil
}

func (s *Server) closeWatch(wt *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers, wt)
}

// bookmarkObject is a BOOKMARK's object: only a resourceVersion, and for
// the end of a streamed list's initial events, its annotation.
func bookmarkObject(rv int64, initialEventsEnd bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEventsEnd {
		u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return u
}

// encodeItem encodes one queued event as a frame of the stream.
func (s *Server) encodeItem(f format, res Resource, it watchItem) ([]byte, error) {
	if it.typ == errorEv {
		_, status := encodeStatus(f.protobuf, it.status)
		return encodeEvent(f, errorEv, status)
	}
	obj, err := s.encodeObject(f, res, it.obj)
	if err != nil {
		return nil, err
	}
	return encodeEvent(f, it.typ, obj)
}

// CutWatches ends every open watch at once, as a broken connection or an
// apiserver restart does: events not yet written are lost, and clients
// must watch again from the last resourceVersion they saw. It returns
// how many it ended.
func (s *Server) CutWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.watchers)
	for wt := range s.watchers {
		wt.cut()
		delete(s.watchers, wt)
	}
	return n
}

// OpenWatches returns how many watches are open now.
func (s *Server) OpenWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// unparsableWatchVersion is kube-apiserver's answer to a watch from a
// resourceVersion that is not a number: its watch cache fails to parse
// it with a plain error, which reaches the client as a 500 with no
// reason (a list at such a version is a 400; conformance's WatchEvents
// pins both).
func unparsableWatchVersion(rv string, err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Message: fmt.Sprintf("resourceVersion: Invalid value: %q: %v", rv, err),
	}}
}
