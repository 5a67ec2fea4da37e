package deltafifo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// model is the DeltaFIFO's rules written as plainly as possible, with no
// locking, tracing or performance in mind. The property test below runs
// the real DeltaFIFO and the model side by side and demands that every Pop
// agrees exactly.
type model struct {
	order   []informer.Key                     // queued keys, first arrival first
	pending map[informer.Key][]modelDelta      // queued deltas per key
	cache   map[informer.Key]*corev1.ConfigMap // what the consumer has applied

	replaced         bool
	initialRemaining int
}

type modelDelta struct {
	typ     deltafifo.DeltaType
	obj     *corev1.ConfigMap
	unknown bool
}

func (m *model) queue(k informer.Key, d modelDelta) {
	ds, queued := m.pending[k]
	ds = append(ds, d)
	if n := len(ds); n >= 2 && ds[n-1].typ == deltafifo.Deleted && ds[n-2].typ == deltafifo.Deleted {
		keep := ds[n-1]
		if keep.unknown && !ds[n-2].unknown {
			keep = ds[n-2]
		}
		ds = append(ds[:n-2], keep)
	}
	m.pending[k] = ds
	if !queued {
		m.order = append(m.order, k)
	}
}

func (m *model) delete(obj *corev1.ConfigMap) {
	k := key(obj.Name)
	_, queued := m.pending[k]
	_, known := m.cache[k]
	if queued || known {
		m.queue(k, modelDelta{typ: deltafifo.Deleted, obj: obj})
	}
}

func (m *model) replace(list []*corev1.ConfigMap) {
	listed := map[informer.Key]bool{}
	for _, obj := range list {
		m.queue(key(obj.Name), modelDelta{typ: deltafifo.Replaced, obj: obj})
		listed[key(obj.Name)] = true
	}
	// Vanished keys: queued ones in queue order, then cached ones in the
	// order the cache lists them (sorted, see cache.ListKeys).
	var gone []informer.Key
	seen := map[informer.Key]bool{}
	for _, k := range m.order {
		if !listed[k] {
			gone, seen[k] = append(gone, k), true
		}
	}
	for _, k := range sortedKeys(m.cache) {
		if !listed[k] && !seen[k] {
			gone = append(gone, k)
		}
	}
	for _, k := range gone {
		last := m.cache[k]
		if ds, ok := m.pending[k]; ok {
			last = ds[len(ds)-1].obj
		}
		m.queue(k, modelDelta{typ: deltafifo.Deleted, obj: last, unknown: true})
	}
	if !m.replaced {
		m.replaced, m.initialRemaining = true, len(m.order)
	}
}

func (m *model) resync() {
	for _, k := range sortedKeys(m.cache) {
		if _, queued := m.pending[k]; !queued {
			m.queue(k, modelDelta{typ: deltafifo.Sync, obj: m.cache[k]})
		}
	}
}

// pop removes the first key; its deltas are rendered like summary's.
func (m *model) pop() popped {
	k := m.order[0]
	m.order = m.order[1:]
	ds := m.pending[k]
	delete(m.pending, k)
	initial := m.initialRemaining > 0
	if initial {
		m.initialRemaining--
	}
	if newest := ds[len(ds)-1]; newest.typ == deltafifo.Deleted {
		delete(m.cache, k)
	} else {
		m.cache[k] = newest.obj
	}
	real := make(deltafifo.Deltas[*corev1.ConfigMap], len(ds))
	for i, d := range ds {
		real[i] = deltafifo.Delta[*corev1.ConfigMap]{Type: d.typ, Object: d.obj, FinalStateUnknown: d.unknown}
	}
	return popped{k.String(), summary(real), initial}
}

func sortedKeys[V any](m map[informer.Key]V) []informer.Key {
	return slices.SortedFunc(maps.Keys(m), func(a, b informer.Key) int { return strings.Compare(a.String(), b.String()) })
}

// TestDeltaFIFOAgreesWithASimpleModel drives random sequences of writes,
// lost watch events, relists, resyncs and pops. The "server" is a map of
// objects; some changes reach the DeltaFIFO as watch events, some are lost
// (as when a watch is down), and a Replace then carries the server's list.
//
// Checked after every step: each Pop equals the model's (key, every delta
// in order with its type, object and final-state flag, initial-list flag),
// so order of first arrival, coalescing and tombstones match the rules
// exactly; the queue lengths agree. At the end, a relist and a full drain
// leave the consumer's cache equal to the server: nothing lost, nothing
// extra.
func TestDeltaFIFOAgreesWithASimpleModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		server := map[string]*corev1.ConfigMap{}
		rv := 0
		next := func(name string) *corev1.ConfigMap { rv++; return cm(name, strconv.Itoa(rv)) }
		c := cache{}
		f := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
		m := &model{pending: map[informer.Key][]modelDelta{}, cache: map[informer.Key]*corev1.ConfigMap{}}
		name := rapid.SampledFrom([]string{"a", "b", "c", "d"})
		serverList := func() []*corev1.ConfigMap {
			names := slices.Sorted(maps.Keys(server))
			list := make([]*corev1.ConfigMap, len(names))
			for i, n := range names {
				list[i] = server[n]
			}
			return list
		}
		pop := func(rt *rapid.T) {
			want := m.pop()
			var got popped
			err := f.Pop(context.Background(), func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
				got = popped{k.String(), summary(d), initial}
				c.apply(k, d)
				return nil
			})
			if err != nil || got != want {
				rt.Fatalf("Pop: got %+v, %v; model says %+v", got, err, want)
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"write": func(rt *rapid.T) { // a change the watch delivers
				n := name.Draw(rt, "name")
				if _, exists := server[n]; exists && rapid.Bool().Draw(rt, "delete") {
					gone := next(n)
					delete(server, n)
					must(rt, f.Delete(gone))
					m.delete(gone)
					return
				}
				obj := next(n)
				_, exists := server[n]
				server[n] = obj
				if exists {
					must(rt, f.Update(obj))
					m.queue(key(n), modelDelta{typ: deltafifo.Updated, obj: obj})
				} else {
					must(rt, f.Add(obj))
					m.queue(key(n), modelDelta{typ: deltafifo.Added, obj: obj})
				}
			},
			"lost": func(rt *rapid.T) { // a change whose watch event never arrives
				n := name.Draw(rt, "name")
				if _, exists := server[n]; exists && rapid.Bool().Draw(rt, "delete") {
					delete(server, n)
				} else {
					server[n] = next(n)
				}
			},
			"relist": func(rt *rapid.T) {
				list := serverList()
				must(rt, f.Replace(list, strconv.Itoa(rv)))
				m.replace(list)
			},
			"resync": func(rt *rapid.T) {
				must(rt, f.Resync())
				m.resync()
			},
			"pop": func(rt *rapid.T) {
				if len(m.order) == 0 {
					rt.Skip("nothing queued")
				}
				pop(rt)
			},
			"": func(rt *rapid.T) {
				if f.Len() != len(m.order) {
					rt.Fatalf("Len %d, model has %d keys queued", f.Len(), len(m.order))
				}
				if f.HasSynced() != (m.replaced && m.initialRemaining == 0) {
					rt.Fatalf("HasSynced %v disagrees with the model", f.HasSynced())
				}
			},
		})

		// Converge: one more relist, then drain.
		list := serverList()
		must(rt, f.Replace(list, strconv.Itoa(rv)))
		m.replace(list)
		for len(m.order) > 0 {
			pop(rt)
		}
		if got, want := render(c), renderServer(server); got != want {
			rt.Fatalf("after relist and drain the cache is %s, the server %s", got, want)
		}
	})
}

func must(rt *rapid.T, err error) {
	if err != nil {
		rt.Fatal(err)
	}
}

func render(c cache) string {
	s := map[string]string{}
	for k, obj := range c {
		s[k.Name] = obj.ResourceVersion
	}
	return fmt.Sprint(s)
}

func renderServer(server map[string]*corev1.ConfigMap) string {
	s := map[string]string{}
	for n, obj := range server {
		s[n] = obj.ResourceVersion
	}
	return fmt.Sprint(s)
}
