package replicas

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/sharding"
)

// A member's object may move to another member in two ways: the member
// acknowledges a drain (its label goes from the member to none, then the
// sharder assigns the new owner), or the sharder relabels it directly
// (from one member straight to another), which is safe only once the old
// member's term is over: sharding's doc promises "a live member's object
// moves only after that member acknowledged the drain".
//
// The checker watches every object of the run itself, as the admin and
// straight at the API server, and records each direct relabel. After
// the run it compares each with the old member's term: a direct relabel
// seen before the old member's term deadline is a move off a live
// member. Unlike an overlap, this does not need a reconcile to be
// running at that moment to be caught.

// move is a direct relabel, from one member straight to another.
type move struct {
	ring, object, from, to string
	child                  bool      // the object has a controller owner
	seen                   time.Time // when the checker's watch saw it: after it happened
}

// labelWatch is the checker's own record of the direct relabels.
type labelWatch struct {
	mu    sync.Mutex
	moves []move   // guarded by mu
	gaps  []string // guarded by mu; times the history may have missed a change
}

// watchLabels records direct relabels of the run's objects until ctx
// ends. It lists once, then watches from that resourceVersion, and
// resumes from the last one it saw when a watch ends. If the API server
// cannot resume (410 Gone), it lists again and records a gap: a change
// in between may have been missed, and the report says so.
func (r *run) watchLabels(ctx context.Context) (*labelWatch, func()) {
	w := &labelWatch{}
	last := map[string]*corev1.ConfigMap{}
	record := func(cm *corev1.ConfigMap) {
		old := last[cm.Name]
		last[cm.Name] = cm
		if old == nil {
			return
		}
		for _, ring := range rings {
			label := sharding.Shard{Ring: ring}.Label()
			from, to := old.Labels[label], cm.Labels[label]
			if from != "" && to != "" && from != to {
				m := move{ring: ring, object: cm.Name, from: from, to: to, seen: time.Now()}
				m.child = metav1.GetControllerOf(cm) != nil
				w.mu.Lock()
				w.moves = append(w.moves, m)
				w.mu.Unlock()
			}
		}
	}
	list := func() string {
		for ctx.Err() == nil {
			cms := &corev1.ConfigMapList{}
			if err := r.core.Get().Namespace(r.ns).Resource("configmaps").Param("labelSelector", appLabel).Do(ctx).Into(cms); err == nil {
				for i := range cms.Items {
					record(&cms.Items[i])
				}
				return cms.ResourceVersion
			}
			sleep(ctx, 100*time.Millisecond)
		}
		return ""
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	rv := list()
	wg.Go(func() {
		for ctx.Err() == nil {
			watcher, err := r.core.Get().Namespace(r.ns).Resource("configmaps").
				Param("labelSelector", appLabel).Param("resourceVersion", rv).Param("allowWatchBookmarks", "true").
				Param("watch", "true").Watch(ctx)
			if err != nil {
				sleep(ctx, 100*time.Millisecond)
				continue
			}
			for ev := range watcher.ResultChan() {
				switch ev.Type {
				case watch.Added, watch.Modified:
					cm := ev.Object.(*corev1.ConfigMap)
					rv = cm.ResourceVersion
					record(cm)
				case watch.Deleted:
					cm := ev.Object.(*corev1.ConfigMap)
					rv = cm.ResourceVersion
					delete(last, cm.Name)
				case watch.Bookmark:
					if obj, ok := ev.Object.(*corev1.ConfigMap); ok {
						rv = obj.ResourceVersion
					}
				case watch.Error:
					if ctx.Err() != nil {
						continue // the watch ended because the run did
					}
					w.mu.Lock()
					w.gaps = append(w.gaps, fmt.Sprintf("%v: %v", clock(time.Now()), ev.Object))
					w.mu.Unlock()
					rv = list()
				}
			}
			watcher.Stop()
		}
	})
	return w, func() { cancel(); wg.Wait() }
}

// termEnd returns when member's term ended. With a stopped line, the
// earlier of the deadline it gives and the line itself: a term that its
// replica ended (a graceful stop) was over when its work returned, and
// the line is printed after that, before the Lease is released; a term
// that ran out (a pause, a partition) was over at its deadline, even if
// the line came later. With no such line, when its process ended
// (SIGKILL). The zero time if no replica printed the member.
func termEnd(events []event, ends map[string]time.Time, member string) time.Time {
	var proc string
	for _, ev := range events {
		switch {
		case ev.kind == "stopped" && len(ev.fields) == 3 && ev.fields[1] == member:
			if deadline := nanos(ev.fields[2]); deadline.Before(ev.at) {
				return deadline
			}
			return ev.at
		case ev.kind == "member" && len(ev.fields) == 2 && ev.fields[1] == member:
			proc = ev.proc
		}
	}
	if proc == "" {
		return time.Time{}
	}
	return ends[proc]
}

// movesOffLiveMembers returns the direct relabels seen before the old
// member's term ended, each with that end. A child counts as much as a
// parent: it leaves a live member by a drain too, even once its parent
// has left that member.
func movesOffLiveMembers(moves []move, events []event, ends map[string]time.Time) (out []move, termEnds []time.Time) {
	for _, m := range moves {
		if end := termEnd(events, ends, m.from); m.seen.Before(end) {
			out, termEnds = append(out, m), append(termEnds, end)
		}
	}
	return out, termEnds
}
