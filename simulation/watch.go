package simulation

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/sharding"
)

// move is a direct relabel the checker's watch saw: a ring's label
// changed from one member straight to another, with no acknowledged
// drain (no unlabelled state) between.
type move struct {
	at                     time.Time
	ring, object, from, to string
	child                  bool // the object has a controller owner
	// parentOn is, for a child's record for "children follow parents"
	// (one of its own beside the move's), the member its parent was
	// labelled for at that moment, draining or not ("": not such a
	// record).
	parentOn string
	// drainedAt is, for a move in two writes whose first took the label
	// off a drained version, that version's resourceVersion: the move is
	// judged only if a sharder, not the member acknowledging, wrote it
	// (unlabelledBySharder). "": judged as it is.
	drainedAt string
}

// watchLabels records every direct relabel, as chaos/replicas' checker
// does: it lists once, then watches as the admin (no faults) from that
// resourceVersion, resuming from the last one seen. A 410 relists and
// records a gap: a change in between may have been missed, so a
// relabel the relist shows is not judged (a drain, its acknowledgement
// and the assignment may all lie in the gap), and an object the relist
// lacks is forgotten (its name's next object is another's life).
func (w *world) watchLabels(ctx context.Context) (moves func() []move) {
	var mu sync.Mutex
	var out []move
	last := map[string]*corev1.ConfigMap{}
	// undrained[ring+" "+name] is the member an object with no
	// controller owner was unlabelled from with no drain label on it: a
	// move in two writes, judged as one when it is labelled again
	// (TestAnObjectUnlabelledWithoutADrainThenGivenToAnotherLiveMemberBreaksMovesOnlyByDrain).
	// A child is let go so by its member after its parent's drain: it is
	// judged by "children follow parents". An object unlabelled from a
	// drained version is recorded too, with that version: the write was
	// an acknowledgement if its member sent it, a move if a sharder did.
	undrained := map[string]unlabel{}
	record := func(cm *corev1.ConfigMap, acrossGap bool) {
		old := last[cm.Name]
		last[cm.Name] = cm
		if old == nil {
			return
		}
		for _, ring := range w.opts.Scenario.rings() {
			label := sharding.Shard{Ring: ring}.Label()
			from, to := old.Labels[label], cm.Labels[label]
			from, drainedAt := w.undrainedFrom(undrained, ring, old, cm, label, acrossGap)
			if from != "" && to == "" && w.grouped && !acrossGap {
				w.reachLetGo(cm)
			}
			if !acrossGap {
				w.reachChange(old, cm, label, sharding.Shard{Ring: ring}.DrainLabel())
			}
			if from != to && !acrossGap {
				// judged: a child's arrival on a member not its parent's
				// (assigned, or moved off a dead member), a let-go by its
				// parent's own member
				if on := parentOn(last, cm, label); on != "" && on != to && (to != "" || on == from) {
					what := "moved to " + to
					if to == "" {
						what = "let go by " + from
					}
					drain := sharding.Shard{Ring: ring}.DrainLabel()
					if old.Labels[drain] != "" {
						what += " (drained)"
					}
					where := on
					if parentOn(last, cm, drain) != "" {
						where += " (draining)"
					}
					w.hist.add(Event{What: Relabel, Ring: ring, Key: cm.Name, Member: from, Detail: fmt.Sprintf("%s, its parent on %s", what, where)})
					mu.Lock()
					out = append(out, move{at: time.Now(), ring: ring, object: cm.Name, from: from, to: to, child: true, parentOn: on})
					mu.Unlock()
				}
			}
			if from == "" || to == "" || from == to {
				continue
			}
			m := move{at: time.Now(), ring: ring, object: cm.Name, from: from, to: to, drainedAt: drainedAt}
			m.child = metav1.GetControllerOf(cm) != nil
			if acrossGap {
				w.hist.add(Event{What: Relabel, Ring: ring, Key: cm.Name, Member: from, Detail: fmt.Sprintf("%s→%s across a gap: not judged", from, to)})
				continue
			}
			w.hist.add(Event{What: Relabel, Ring: ring, Key: cm.Name, Member: from, Detail: fmt.Sprintf("%s→%s", from, to)})
			mu.Lock()
			out = append(out, m)
			mu.Unlock()
		}
	}
	list := func() string {
		for ctx.Err() == nil {
			cms := &corev1.ConfigMapList{}
			if err := w.core.Get().Namespace(Namespace).Resource("configmaps").Do(ctx).Into(cms); err == nil {
				listed := map[string]bool{}
				for i := range cms.Items {
					record(&cms.Items[i], true)
					listed[cms.Items[i].Name] = true
				}
				maps.DeleteFunc(last, func(name string, _ *corev1.ConfigMap) bool { return !listed[name] })
				maps.DeleteFunc(undrained, func(key string, _ unlabel) bool { // ring+" "+name: a life the relist no longer shows
					_, name, _ := strings.Cut(key, " ")
					return !listed[name]
				})
				return cms.ResourceVersion
			}
			pause(ctx, 100*time.Millisecond)
		}
		return ""
	}
	rv := list()
	go func() {
		for ctx.Err() == nil {
			watcher, err := w.core.Get().Namespace(Namespace).Resource("configmaps").
				Param("resourceVersion", rv).Param("allowWatchBookmarks", "true").Param("watch", "true").Watch(ctx)
			if err != nil {
				pause(ctx, 100*time.Millisecond)
				continue
			}
			for ev := range watcher.ResultChan() {
				switch ev.Type {
				case watch.Added, watch.Modified:
					cm := ev.Object.(*corev1.ConfigMap)
					rv = cm.ResourceVersion
					record(cm, false)
				case watch.Deleted:
					cm := ev.Object.(*corev1.ConfigMap)
					rv = cm.ResourceVersion
					w.reachDeleted(last, cm)
					delete(last, cm.Name)
					for _, ring := range w.opts.Scenario.rings() {
						delete(undrained, ring+" "+cm.Name)
					}
					w.hist.add(Event{What: Deleted, Key: Namespace + "/" + cm.Name, Version: cm.ResourceVersion})
				case watch.Bookmark:
					if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
						rv = cm.ResourceVersion
					}
				case watch.Error:
					if ctx.Err() == nil {
						w.hist.add(Event{What: Gap, Detail: fmt.Sprint(ev.Object)})
						rv = list()
					}
				}
			}
			watcher.Stop()
		}
	}()
	return func() []move {
		mu.Lock()
		defer mu.Unlock()
		return append([]move(nil), out...)
	}
}

// parentOn is the member cm's parent is labelled for in the ring whose
// shard label is label, as the watch last saw the parent: its
// controller owner, a ConfigMap of that UID ("": cm has none, or the
// watch has not seen it).
func parentOn(last map[string]*corev1.ConfigMap, cm *corev1.ConfigMap, label string) string {
	ref := metav1.GetControllerOfNoCopy(cm)
	if ref == nil || ref.Kind != "ConfigMap" {
		return ""
	}
	if parent := last[ref.Name]; parent != nil && parent.UID == ref.UID {
		return parent.Labels[label]
	}
	return ""
}

// pause waits d, or until ctx ends: a retry's wait that a cancelled run
// does not sit out, so the checker's goroutines have ended once the run
// returns (a bubble whose test returns with one still asleep panics:
// TestTheCheckersWatchRecordsAChildThatLeavesOrArrivesWithoutItsParent
// did, once in a suite, when its cancel met a re-watch).
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// unlabel is an object's ring label taken off: the member it named,
// and, if the version it was taken off was drained, that version's
// resourceVersion.
type unlabel struct{ from, drainedAt string }

// undrainedFrom is the member a relabel of cm in ring is judged to come
// from: old's label, or, when old had none, the member it was taken from
// without a drain (undrained), so that a move in two writes (unlabelled,
// then labelled for another member) is judged as the one write it
// amounts to; and, for a move whose first write took the label off a
// drained version, that version (see move.drainedAt). It keeps undrained
// up to date: an object with no controller owner unlabelled from a
// version with no drain label is recorded, and any object unlabelled
// from a drained version; a relabel, a drain or a gap ends the record.
func (w *world) undrainedFrom(undrained map[string]unlabel, ring string, old, cm *corev1.ConfigMap, label string, acrossGap bool) (from, drainedAt string) {
	key := ring + " " + cm.Name
	from, to := old.Labels[label], cm.Labels[label]
	drain := sharding.Shard{Ring: ring}.DrainLabel()
	switch {
	case acrossGap:
		delete(undrained, key)
	case from != "" && to == "" && old.Labels[drain] != "":
		undrained[key] = unlabel{from: from, drainedAt: old.ResourceVersion}
	case from != "" && to == "" && metav1.GetControllerOf(old) == nil:
		undrained[key] = unlabel{from: from}
	case from == "" && to != "":
		was, ok := undrained[key]
		delete(undrained, key)
		if ok && was.from != to {
			return was.from, was.drainedAt
		}
	}
	return from, ""
}
