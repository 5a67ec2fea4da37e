package simulation

import (
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// handlerStream is what one handler was told, replayed: the objects
// (Widgets, ConfigMaps) it holds by its events, each at the
// resourceVersion of the last event that named it. sharedinformer
// promises each handler every change in order ("Handlers" in its package
// doc), so the events of one key must read as a life: an add of a key it
// does not hold, updates whose old object is the last it was given, a
// delete of a key it holds; and once the handler has caught up, what it
// holds is the cache.
type handlerStream struct {
	mu   sync.Mutex
	held map[string]heldObject // by namespace/name; guarded by mu
}

// heldObject is one object as a handler last heard of it.
type heldObject struct {
	uid, rv string
}

func newHandlerStream() *handlerStream {
	return &handlerStream{held: map[string]heldObject{}}
}

func streamKey(u metav1.Object) string {
	return u.GetNamespace() + "/" + u.GetName()
}

func heldOf(u metav1.Object) heldObject {
	return heldObject{uid: string(u.GetUID()), rv: u.GetResourceVersion()}
}

// replay is a handler that replays every event into s, and calls broke
// with what is wrong with an event that does not follow the ones before.
func replay[T informer.Object](s *handlerStream, broke func(wrong string)) si.Handler[T] {
	check := func(wrong string) {
		if wrong != "" {
			broke(wrong)
		}
	}
	return si.HandlerFuncs[T]{
		AddFunc:    func(obj T, _ bool) { check(s.add(obj)) },
		UpdateFunc: func(old, obj T) { check(s.update(old, obj)) },
		DeleteFunc: func(obj T, _ bool) { check(s.remove(obj)) },
	}
}

// add replays an add, and says what is wrong with it: "" when nothing.
func (s *handlerStream) add(u metav1.Object) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := streamKey(u)
	before, ok := s.held[key]
	s.held[key] = heldOf(u)
	if ok {
		return fmt.Sprintf("an add of %s (uid %s, rv %s) while it held it (uid %s, rv %s)", key, u.GetUID(), u.GetResourceVersion(), before.uid, before.rv)
	}
	return ""
}

// update replays an update: its old object must be the last the handler
// was given for the key, and within one life (UID) its resourceVersion
// never goes back (a resync repeats it; a new life, a re-created object
// told as an update, starts its own).
func (s *handlerStream) update(old, obj metav1.Object) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := streamKey(obj)
	before, ok := s.held[key]
	s.held[key] = heldOf(obj)
	switch {
	case !ok:
		return fmt.Sprintf("an update of %s (to rv %s) it never got an add for, or got a delete of", key, obj.GetResourceVersion())
	case before != heldOf(old):
		return fmt.Sprintf("an update of %s from (uid %s, rv %s), but the last it was given is (uid %s, rv %s)", key, old.GetUID(), old.GetResourceVersion(), before.uid, before.rv)
	case before.uid == string(obj.GetUID()) && obj.GetResourceVersion() != "" && rvBefore(obj.GetResourceVersion(), before.rv):
		return fmt.Sprintf("an update of %s (uid %s) back from rv %s to rv %s", key, before.uid, before.rv, obj.GetResourceVersion())
	}
	return ""
}

// remove replays a delete of a key the handler must hold, in the life
// (UID) it holds; a watch's delete carries a newer resourceVersion than
// the one held, so that is not compared.
func (s *handlerStream) remove(u metav1.Object) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := streamKey(u)
	before, ok := s.held[key]
	switch {
	case !ok:
		return fmt.Sprintf("a delete of %s (uid %s, rv %s) it did not hold", key, u.GetUID(), u.GetResourceVersion())
	case before.uid != string(u.GetUID()):
		return fmt.Sprintf("a delete of %s (uid %s, rv %s), but it holds another life of it (uid %s, rv %s)", key, u.GetUID(), u.GetResourceVersion(), before.uid, before.rv)
	}
	delete(s.held, key)
	return ""
}

// byName is what the handler holds as cacheOf reads a cache: each
// object's resourceVersion by name.
func (s *handlerStream) byName() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.held))
	for key, h := range s.held {
		_, name, _ := strings.Cut(key, "/")
		out[name] = h.rv
	}
	return out
}
