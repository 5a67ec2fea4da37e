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

// harness runs the real DeltaFIFO and the model side by side over a
// simulated server. The "server" is a map of objects; some changes reach
// the DeltaFIFO as watch events (write), some are lost, as when a watch is
// down (lost), and a relist then carries the server's list. Every method
// returns an error when the DeltaFIFO and the model disagree.
type harness struct {
	server map[string]*corev1.ConfigMap
	rv     int
	cache  cache
	fifo   *deltafifo.DeltaFIFO[*corev1.ConfigMap]
	model  *model
}

func newHarness() *harness {
	c := cache{}
	return &harness{
		server: map[string]*corev1.ConfigMap{},
		cache:  c,
		fifo:   mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c}),
		model:  &model{pending: map[informer.Key][]modelDelta{}, cache: map[informer.Key]*corev1.ConfigMap{}},
	}
}

func (h *harness) next(name string) *corev1.ConfigMap {
	h.rv++
	return cm(name, strconv.Itoa(h.rv))
}

// write makes a change the watch delivers: an add or update of name, or,
// if del and it exists, its delete.
func (h *harness) write(name string, del bool) error {
	if _, exists := h.server[name]; exists && del {
		gone := h.next(name)
		delete(h.server, name)
		h.model.delete(gone)
		return h.fifo.Delete(gone)
	}
	obj := h.next(name)
	_, exists := h.server[name]
	h.server[name] = obj
	if exists {
		h.model.queue(key(name), modelDelta{typ: deltafifo.Updated, obj: obj})
		return h.fifo.Update(obj)
	}
	h.model.queue(key(name), modelDelta{typ: deltafifo.Added, obj: obj})
	return h.fifo.Add(obj)
}

// lost makes a change whose watch event never arrives.
func (h *harness) lost(name string, del bool) {
	if _, exists := h.server[name]; exists && del {
		delete(h.server, name)
	} else {
		h.server[name] = h.next(name)
	}
}

func (h *harness) relist() error {
	names := slices.Sorted(maps.Keys(h.server))
	list := make([]*corev1.ConfigMap, len(names))
	for i, n := range names {
		list[i] = h.server[n]
	}
	h.model.replace(list)
	return h.fifo.Replace(list, strconv.Itoa(h.rv))
}

func (h *harness) resync() error {
	h.model.resync()
	return h.fifo.Resync()
}

// pop pops one key, if any is queued, and compares it with the model's.
func (h *harness) pop() error {
	if len(h.model.order) == 0 {
		return nil
	}
	want := h.model.pop()
	var got popped
	err := h.fifo.Pop(context.Background(), func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
		got = popped{k.String(), summary(d), initial}
		h.cache.apply(k, d)
		return nil
	})
	if err != nil || got != want {
		return fmt.Errorf("Pop: got %+v, %v; model says %+v", got, err, want)
	}
	return nil
}

// check compares what can be read without popping.
func (h *harness) check() error {
	if h.fifo.Len() != len(h.model.order) {
		return fmt.Errorf("Len %d, model has %d keys queued", h.fifo.Len(), len(h.model.order))
	}
	if h.fifo.HasSynced() != (h.model.replaced && h.model.initialRemaining == 0) {
		return fmt.Errorf("HasSynced %v disagrees with the model", h.fifo.HasSynced())
	}
	return nil
}

// converge relists and drains; the consumer's cache must then equal the
// server: nothing lost, nothing extra.
func (h *harness) converge() error {
	if err := h.relist(); err != nil {
		return err
	}
	for len(h.model.order) > 0 {
		if err := h.pop(); err != nil {
			return err
		}
	}
	if got, want := render(h.cache), renderServer(h.server); got != want {
		return fmt.Errorf("after relist and drain the cache is %s, the server %s", got, want)
	}
	return nil
}

// TestDeltaFIFOAgreesWithASimpleModel drives random sequences of watched
// writes, lost writes, relists, resyncs and pops through the harness.
//
// Checked after every step: each Pop equals the model's (key, every delta
// in order with its type, object and final-state flag, initial-list flag),
// so order of first arrival, coalescing and tombstones match the rules
// exactly; the queue lengths agree. At the end, a relist and a full drain
// leave the consumer's cache equal to the server.
func TestDeltaFIFOAgreesWithASimpleModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness()
		name := rapid.SampledFrom([]string{"a", "b", "c", "d"})
		rt.Repeat(map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				must(rt, h.write(name.Draw(rt, "name"), rapid.Bool().Draw(rt, "delete")))
			},
			"lost": func(rt *rapid.T) {
				h.lost(name.Draw(rt, "name"), rapid.Bool().Draw(rt, "delete"))
			},
			"relist": func(rt *rapid.T) { must(rt, h.relist()) },
			"resync": func(rt *rapid.T) { must(rt, h.resync()) },
			"pop":    func(rt *rapid.T) { must(rt, h.pop()) },
			"":       func(rt *rapid.T) { must(rt, h.check()) },
		})
		must(rt, h.converge())
	})
}

// FuzzDeltaFIFOOperations is the same property under go test -fuzz: each
// input byte is one operation (its low 3 bits), on one of four names (the
// next 2 bits), deleting or not (the next bit).
func FuzzDeltaFIFOOperations(f *testing.F) {
	f.Add([]byte{0x00, 0x08, 0x02, 0x04, 0x20, 0x03, 0x01, 0x04})
	f.Add([]byte{0x00, 0x21, 0x02, 0x00, 0x04, 0x04, 0x03, 0x02})
	f.Add([]byte{0x01, 0x09, 0x11, 0x02, 0x23, 0x04, 0x04, 0x04})
	f.Fuzz(func(t *testing.T, ops []byte) {
		h := newHarness()
		for i, op := range ops {
			name, del := string(rune('a'+(op>>3)&3)), op&0x20 != 0
			var err error
			switch op & 7 {
			case 0, 5:
				err = h.write(name, del)
			case 1, 6:
				h.lost(name, del)
			case 2:
				err = h.relist()
			case 3:
				err = h.resync()
			default:
				err = h.pop()
			}
			if err == nil {
				err = h.check()
			}
			if err != nil {
				t.Fatalf("op %d (%#x): %v", i, op, err)
			}
		}
		if err := h.converge(); err != nil {
			t.Fatal(err)
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
