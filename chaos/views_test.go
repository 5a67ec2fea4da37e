package chaos_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// view is one handler's picture of the collection: every notification it
// got, applied in order. It checks the delivery contract as it goes and
// records each breach rather than failing at once, so that a run reports
// them all.
type view struct {
	name  string
	delay time.Duration // a slow handler sleeps this long per call

	mu         sync.Mutex
	live       map[string]string // key → resourceVersion of the last state seen, for objects not deleted; guarded by mu
	highest    map[string]uint64 // key → the highest resourceVersion ever seen, deletes included; guarded by mu
	violations []string          // guarded by mu

	adds, updates, deletes, unknownDeletes atomic.Int64
}

func newView(name string, delay time.Duration) *view {
	return &view{name: name, delay: delay, live: map[string]string{}, highest: map[string]uint64{}}
}

func (v *view) handler() sharedinformer.Handler[*corev1.ConfigMap] { return v }

func (v *view) OnAdd(obj *corev1.ConfigMap, _ bool) {
	v.adds.Add(1)
	v.apply("add", obj, func(key string) {
		if _, ok := v.live[key]; ok {
			v.breach("add of %s at %s, which it already held at %s", key, obj.ResourceVersion, v.live[key])
		}
		v.live[key] = obj.ResourceVersion
	})
}

func (v *view) OnUpdate(oldObj, newObj *corev1.ConfigMap) {
	v.updates.Add(1)
	v.apply("update", newObj, func(key string) {
		last, ok := v.live[key]
		switch {
		case !ok:
			v.breach("update of %s, which it did not hold", key)
		case oldObj.ResourceVersion != last:
			v.breach("update of %s from %s, but the last state it saw was %s", key, oldObj.ResourceVersion, last)
		}
		v.live[key] = newObj.ResourceVersion
	})
}

func (v *view) OnDelete(obj *corev1.ConfigMap, finalStateUnknown bool) {
	v.deletes.Add(1)
	if finalStateUnknown {
		v.unknownDeletes.Add(1)
	}
	v.apply("delete", obj, func(key string) {
		if _, ok := v.live[key]; !ok {
			v.breach("delete of %s (final state unknown: %v), which it did not hold", key, finalStateUnknown)
		}
		delete(v.live, key)
	})
}

// apply checks that obj's resourceVersion does not go backwards for its
// key, then lets change update the view, all under the lock.
func (v *view) apply(what string, obj *corev1.ConfigMap, change func(key string)) {
	if v.delay > 0 {
		time.Sleep(v.delay)
	}
	key := obj.Namespace + "/" + obj.Name
	v.mu.Lock()
	defer v.mu.Unlock()
	rv, err := strconv.ParseUint(obj.ResourceVersion, 10, 64)
	if err != nil {
		v.breach("%s of %s with resourceVersion %q, not an integer", what, key, obj.ResourceVersion)
	} else if rv < v.highest[key] {
		v.breach("%s of %s at resourceVersion %d after it saw %d: backwards", what, key, rv, v.highest[key])
	} else {
		v.highest[key] = rv
	}
	change(key)
}

// breach records a broken contract; v.mu is held.
func (v *view) breach(format string, args ...any) {
	if len(v.violations) < 20 {
		v.violations = append(v.violations, v.name+": "+fmt.Sprintf(format, args...))
	}
}

// state returns a copy of the live objects and the breaches so far.
func (v *view) state() (map[string]string, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	live := make(map[string]string, len(v.live))
	for k, rv := range v.live {
		live[k] = rv
	}
	return live, append([]string(nil), v.violations...)
}

func (v *view) delivered() int64 {
	return v.adds.Load() + v.updates.Load() + v.deletes.Load()
}
