package sharedinformer

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodedWidget is Widget i decoded from JSON as the reflector decodes it
// (every map and string its own), with eight metadata fields and no
// managedFields, as a server that writes none sends it (the fake API
// server, an aggregated API server) or a transform that rebuilds
// metadata leaves it.
func decodedWidget(t testing.TB, i int) *unstructured.Unstructured {
	text := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{`+
		`"name":"w-%06d","namespace":"team-a","uid":"6f1c2a4e-0d6b-4b8e-9a57-%012d","resourceVersion":"%d",`+
		`"generation":1,"creationTimestamp":"2026-12-06T01:02:03Z",`+
		`"labels":{"app":"shop"},"annotations":{"owner":"team-a"}},"spec":{"size":%d}}`, i, i, 1000+i, i)
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(text), nil, nil)
	require.NoError(t, err)
	u := obj.(*unstructured.Unstructured)
	require.Len(t, u.Object["metadata"], 8)
	return u
}

// TestSharingAWidgetWhoseValuesTheTableKnowsAllocatesNoMoreThanItsStrings
// proves that sharing costs the object nothing for the Widget docs/17
// measures (bench/scale: labels, and the managedFields entry the API
// server writes, make eight metadata fields): once the table holds its
// managedFields entry, sharing another such Widget only points its list
// at it. (The review that wrote it found the interner also writing the
// apiVersion, kind and namespace into the object's maps, and a write into
// a full small map, eight entries, grows it to a table: about 300 bytes
// an object. Unstructured strings are not shared since.)
func TestSharingAWidgetWhoseValuesTheTableKnowsAllocatesNoMoreThanItsStrings(t *testing.T) {
	widget := func(i int) *unstructured.Unstructured {
		text := fmt.Sprintf(`{"apiVersion":"bench.listwatch.dev/v1","kind":"Widget","metadata":{`+
			`"name":"widget-%07d","namespace":"ns-1","uid":"6f1c2a4e-0d6b-4b8e-9a57-%012d","resourceVersion":"%d",`+
			`"generation":1,"creationTimestamp":"2026-12-06T01:02:03Z","labels":{"app":"app-1","tier":"backend"},`+
			`"managedFields":[{"manager":"scale","operation":"Update","apiVersion":"bench.listwatch.dev/v1",`+
			`"time":"2026-12-06T01:02:03Z","fieldsType":"FieldsV1",`+
			`"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{".":{},"f:payload":{}}}}]},`+
			`"spec":{"payload":"p"}}`, i, i, 1000+i)
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(text), nil, nil)
		require.NoError(t, err)
		u := obj.(*unstructured.Unstructured)
		require.Len(t, u.Object["metadata"], 8)
		return u
	}
	var in interner
	in.share(widget(0))
	objs := make([]*unstructured.Unstructured, 101)
	for i := range objs {
		objs[i] = widget(i + 1)
	}
	in.share(objs[0]) // the first call's own costs, once
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, u := range objs[1:] {
		in.share(u)
	}
	runtime.ReadMemStats(&after)
	perObject := (after.TotalAlloc - before.TotalAlloc) / uint64(len(objs)-1)
	require.LessOrEqual(t, perObject, uint64(3*16), "bytes allocated a Widget shared (%d allocations)", (after.Mallocs-before.Mallocs)/uint64(len(objs)-1))
}

// TestSharingUnstructuredObjectsDoesNotGrowTheHeapTheyHold proves that
// sharing writes nothing into an unstructured object's maps: 20,000
// Widgets with no managedFields, as the cache would hold them, hold no
// more after the interner has seen them. It once shared their
// apiVersion, kind and namespace; writing a map entry, even one the map holds, makes
// the runtime grow a full small map (eight entries, as this metadata
// has) to a table (reflector's
// TestJSONNumbersWritesNothingIntoAnObjectWithNoFloat says so too), so
// sharing a namespace string of six bytes cost each object hundreds; the
// interner writes into no map of an unstructured object since.
func TestSharingUnstructuredObjectsDoesNotGrowTheHeapTheyHold(t *testing.T) {
	const n = 20000
	objs := make([]*unstructured.Unstructured, n)
	for i := range objs {
		objs[i] = decodedWidget(t, i)
	}
	var in interner
	before := liveHeap()
	for _, u := range objs {
		in.share(u)
	}
	after := liveHeap()
	runtime.KeepAlive(objs)
	runtime.KeepAlive(&in)
	grown := int64(after) - int64(before)
	t.Logf("live heap before sharing %d bytes, after %d: %+d bytes, %+.0f an object", before, after, grown, float64(grown)/n)
	require.LessOrEqual(t, grown, int64(64<<10), "sharing made the %d objects hold %d bytes more (%.0f an object), not less", n, grown, float64(grown)/n)
}

// TestTheInternerHoldsAboutItsBudgetOfUnstructuredEntries proves the
// bound intern.go promises: "what the interner holds beyond what the
// cache holds anyway is at most about internBudget". A controller that
// writes its Widgets one second apart gives each a managedFields entry of
// its own time, so each is a new entry of the table; once those objects
// are gone from the cache (updated again, deleted), the table alone
// holds the entries. The table is weighed as full as it gets, just
// before it would start afresh; "about" is taken generously, as twice.
// (The review that wrote it found entries counted at 64 bytes a map
// entry, nothing for the entry's own map or an empty one, where the
// runtime gives a map of one entry a group of eight slots: 4.9× and
// 9.3×. mapBytes counts the maps as the runtime makes them since.)
func TestTheInternerHoldsAboutItsBudgetOfUnstructuredEntries(t *testing.T) {
	for _, c := range []struct {
		name  string
		entry func(i int) string
	}{
		{"a controller's entries a second apart", func(i int) string {
			return fmt.Sprintf(`{"manager":"widget-controller","operation":"Update","apiVersion":"example.com/v1",`+
				`"time":"2026-%02d-%02dT%02d:%02d:%02dZ","fieldsType":"FieldsV1",`+
				`"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:size":{}}}}`,
				1+i/(28*86400)%12, 1+i/86400%28, i/3600%24, i/60%60, i%60)
		}},
		{"a controller's status updates a second apart", func(i int) string {
			return fmt.Sprintf(`{"manager":"widget-controller","operation":"Update","apiVersion":"example.com/v1",`+
				`"time":"2026-%02d-%02dT%02d:%02d:%02dZ","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:ready":{}}},"subresource":"status"}`,
				1+i/(28*86400)%12, 1+i/86400%28, i/3600%24, i/60%60, i%60)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &interner{}
			share := func(name string, i int) {
				text := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name +
					`","namespace":"team-a","managedFields":[` + c.entry(i) + `]},"spec":{"size":1}}`
				obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(text), nil, nil)
				require.NoError(t, err)
				in.share(obj.(*unstructured.Unstructured))
			}
			// Fill the table until it starts afresh once, then again to
			// just before it would.
			i := 0
			for ; ; i++ {
				before := in.bytes
				share(fmt.Sprintf("w-%d", i), i)
				if in.bytes < before {
					break
				}
				require.Less(t, i, 1<<23, "the table never started afresh")
			}
			perEntry := internBudget / max(i, 1)
			for i++; in.bytes+2*perEntry+64 <= internBudget; i++ {
				share(fmt.Sprintf("w-%d", i), i)
			}
			full := liveHeap()
			entries, counted := len(in.entries), in.bytes
			runtime.KeepAlive(in)
			in = nil
			held := int64(full) - int64(liveHeap())
			t.Logf("the table holds %d entries, counted as %d bytes; the heap it alone keeps: %d bytes, %.1fx internBudget",
				entries, counted, held, float64(held)/internBudget)
			require.LessOrEqual(t, held, int64(2*internBudget), "the interner alone holds %.1fx internBudget", float64(held)/internBudget)
		})
	}
}

// TestTheInternerStaysWithinItsBudgetWhateverTheEntries proves that the
// table's bound holds for any stream of objects, as intern.go promises
// ("once its values pass internBudget bytes it starts afresh, and a value
// longer than internLongest is never kept"): an object it shares and the
// cache then drops must not stay in the table uncounted. (The review
// that wrote it found an entry counted by its fieldsV1 and by those of
// its strings new to the table, so an entry whose string was too long to
// be counted (an apiVersion past internLongest), or whose strings were
// all known in a new combination, was kept for nothing, and the table
// never started afresh: 7.1× and 26.3×. Each entry is counted whole
// since.)
func TestTheInternerStaysWithinItsBudgetWhateverTheEntries(t *testing.T) {
	for _, c := range []struct {
		name    string
		objects int
		entry   func(i int) string
	}{
		{"entries with an apiVersion past internLongest", 100, func(i int) string {
			return fmt.Sprintf(`{"manager":"m","operation":"Update","apiVersion":"example.com/%0*d","fieldsV1":{}}`, internLongest, i)
		}},
		{"entries that combine known strings anew", 200 * 200, func(i int) string {
			return fmt.Sprintf(`{"manager":"manager-%03d","operation":"Update","time":"2026-12-06T01:%02d:%02dZ","fieldsV1":{}}`,
				i%200, i/200/60, i/200%60)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &interner{}
			for i := range c.objects {
				text := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-` + fmt.Sprint(i) +
					`","namespace":"team-a","managedFields":[` + c.entry(i) + `]},"spec":{"size":1}}`
				obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(text), nil, nil)
				require.NoError(t, err)
				in.share(obj.(*unstructured.Unstructured))
			}
			full := liveHeap()
			entries, counted := len(in.entries), in.bytes
			runtime.KeepAlive(in)
			in = nil
			held := int64(full) - int64(liveHeap())
			t.Logf("after %d objects the table holds %d entries, counted as %d bytes; the heap it alone keeps: %d bytes, %.1fx internBudget",
				c.objects, entries, counted, held, float64(held)/internBudget)
			require.LessOrEqual(t, held, int64(2*internBudget), "the interner alone holds %.1fx internBudget", float64(held)/internBudget)
		})
	}
}
