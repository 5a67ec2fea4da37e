package indexer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

// Every bad input is an error that names the problem, and leaves the
// Indexer exactly as it was: same objects, same index contents.
func TestBadInputIsAnErrorThatNamesTheProblemAndChangesNothing(t *testing.T) {
	var typedNil *corev1.ConfigMap
	app := LabelIndexFunc[*corev1.ConfigMap]("app")
	for _, tc := range []struct {
		what    string
		do      func(idx *Indexer[*corev1.ConfigMap]) error
		wantErr []string // substrings the message must contain
	}{
		{"Add of a typed nil pointer",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Add(typedNil) },
			[]string{"Add", "the object is nil"}},
		{"Update of a typed nil pointer",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Update(typedNil) },
			[]string{"Update", "the object is nil"}},
		{"Delete of a typed nil pointer",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Delete(typedNil) },
			[]string{"Delete", "the object is nil"}},
		{"Add of an object without a name",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Add(cm("default", "")) },
			[]string{"Add", "the name is empty"}},
		{"Delete of an object without a name",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Delete(cm("default", "")) },
			[]string{"Delete", "the name is empty"}},
		{"Add of a new object its IndexFunc rejects",
			func(idx *Indexer[*corev1.ConfigMap]) error { return idx.Add(cm("default", "bad", "app", "x")) },
			[]string{"Add", "default/bad", `index "picky"`, "cannot index bad"}},
		{"Update its IndexFunc rejects, of a stored object",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.Update(cm("default", "a", "app", "moved", "reject", "yes"))
			},
			[]string{"Update", "default/a", `index "strict"`, "rejected"}},
		{"Replace with a typed nil item",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.Replace([]*corev1.ConfigMap{cm("default", "x"), typedNil})
			},
			[]string{"Replace", "item 1", "the object is nil"}},
		{"Replace with an item without a name",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.Replace([]*corev1.ConfigMap{cm("default", "")})
			},
			[]string{"Replace", "item 0", "the name is empty"}},
		{"Replace with a key twice",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.Replace([]*corev1.ConfigMap{cm("default", "x"), cm("default", "y"), cm("default", "x")})
			},
			[]string{"Replace", "default/x", "twice", "items 0 and 2"}},
		{"Replace with an item its IndexFunc rejects",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.Replace([]*corev1.ConfigMap{cm("default", "x"), cm("default", "bad")})
			},
			[]string{"Replace", "default/bad", `index "picky"`, "cannot index bad"}},
		{"AddIndexers with a name already in use",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{"aaa-new": app, "app": app})
			},
			[]string{"AddIndexers", `"app" already exists`}},
		{"AddIndexers with a nil IndexFunc",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{"aaa-new": app, "broken": nil})
			},
			[]string{"AddIndexers", `index "broken"`, "nil"}},
		{"AddIndexers whose IndexFunc rejects a stored object",
			func(idx *Indexer[*corev1.ConfigMap]) error {
				return idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{"aaa-new": app, "zzz-picky": failOn("b")})
			},
			[]string{"AddIndexers", "default/b", `index "zzz-picky"`, "cannot index b"}},
		{"ByIndex of an unknown index",
			func(idx *Indexer[*corev1.ConfigMap]) error { _, err := idx.ByIndex("nope", "x"); return err },
			[]string{"ByIndex", `no index named "nope"`, "namespace (built in), app, picky, strict"}},
		{"IndexKeys of an unknown index",
			func(idx *Indexer[*corev1.ConfigMap]) error { _, err := idx.IndexKeys("nope", "x"); return err },
			[]string{"IndexKeys", `no index named "nope"`}},
		{"IndexValues of an unknown index",
			func(idx *Indexer[*corev1.ConfigMap]) error { _, err := idx.IndexValues("nope"); return err },
			[]string{"IndexValues", `no index named "nope"`}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			indexers := standardIndexers()
			indexers["picky"] = failOn("bad")
			indexers["strict"] = func(obj *corev1.ConfigMap) ([]string, error) {
				if obj.Labels["reject"] == "yes" {
					return nil, errors.New("rejected")
				}
				return nil, nil
			}
			idx := must(New(Options[*corev1.ConfigMap]{Indexers: indexers, DetectMutations: true}))
			require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
			require.NoError(t, idx.Add(cm("default", "b", "app", "db")))
			before := stateOf(t, idx)

			err := tc.do(idx)
			require.Error(t, err)
			for _, want := range tc.wantErr {
				assert.ErrorContains(t, err, want)
			}
			assert.Equal(t, before, stateOf(t, idx), "nothing changed")
			assert.False(t, idx.HasIndex("aaa-new"), "a failed AddIndexers adds none of its indices")
			requireExact(t, idx)
			require.NoError(t, idx.CheckMutations(), "the detector's copies are untouched too")
		})
	}
}

func TestAnObjectWithAnInvalidKeyIsRejectedWithErrInvalidKey(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	err := idx.Add(cm("default", "a/b"))
	assert.ErrorIs(t, err, informer.ErrInvalidKey)
	assert.ErrorContains(t, err, `contains "/"`)
	assert.Zero(t, idx.Len())
}

// With an interface type argument, a nil interface value and a typed nil
// pointer inside one are both rejected, not panicked on.
func TestNilAndTypedNilInterfaceValuesAreRejected(t *testing.T) {
	idx := must(New(Options[informer.Object]{Indexers: map[string]IndexFunc[informer.Object]{
		"ns": NamespaceIndexFunc[informer.Object],
	}}))
	var typedNil *corev1.ConfigMap
	for _, obj := range []informer.Object{nil, typedNil} {
		assert.ErrorContains(t, idx.Add(obj), "the object is nil")
		assert.ErrorContains(t, idx.Update(obj), "the object is nil")
		assert.ErrorContains(t, idx.Delete(obj), "the object is nil")
		assert.ErrorContains(t, idx.Replace([]informer.Object{obj}), "the object is nil")
	}
	assert.Zero(t, idx.Len())
}

func TestNewRejectsANilIndexFuncNamingTheIndex(t *testing.T) {
	_, err := New(Options[*corev1.ConfigMap]{Indexers: map[string]IndexFunc[*corev1.ConfigMap]{"broken": nil}})
	assert.EqualError(t, err, `indexer.New: the IndexFunc of index "broken" is nil`)
}
