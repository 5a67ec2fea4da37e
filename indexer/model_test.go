package indexer

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/listwatch/informer"
)

// The model-based test: rapid draws random sequences of Add, Update,
// Delete, Replace and AddIndexers over a small key and label space, applies
// each to an Indexer and to a plain map (the model), and after every step
// checks that
//
//   - Get, List, ListKeys and Len agree with the map;
//   - every index equals a brute-force recomputation from the stored
//     objects, with no empty value left behind (requireExact);
//   - a write fails exactly when the model says it must, and then changes
//     nothing.
//
// When it finds a failing sequence, rapid shrinks it to a minimal one.
func TestIndexerMatchesAMapModelUnderRandomWrites(t *testing.T) {
	errRejected := errors.New("app=bad is rejected")
	pool := map[string]IndexFunc[*corev1.ConfigMap]{
		"app": LabelIndexFunc[*corev1.ConfigMap]("app"),
		// Multi-valued: every label value the object has.
		"values": func(obj *corev1.ConfigMap) ([]string, error) {
			return slices.Collect(maps.Values(obj.Labels)), nil
		},
		// Fails on some objects, so failed writes are part of the walk.
		"picky": func(obj *corev1.ConfigMap) ([]string, error) {
			if obj.Labels["app"] == "bad" {
				return nil, errRejected
			}
			return []string{obj.Labels["tier"]}, nil
		},
	}
	poolNames := slices.Sorted(maps.Keys(pool))

	objects := rapid.Custom(func(t *rapid.T) *corev1.ConfigMap {
		obj := cm(rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "namespace"),
			rapid.SampledFrom([]string{"x", "y", "z"}).Draw(t, "name"))
		for _, label := range []string{"app", "tier"} {
			if v := rapid.SampledFrom([]string{"-", "", "web", "db", "bad"}).Draw(t, label); v != "-" {
				if obj.Labels == nil {
					obj.Labels = map[string]string{}
				}
				obj.Labels[label] = v
			}
		}
		return obj
	})
	keyOfCM := func(obj *corev1.ConfigMap) informer.Key { return key(obj.Namespace, obj.Name) }

	rapid.Check(t, func(t *rapid.T) {
		active := map[string]bool{}
		initial := map[string]IndexFunc[*corev1.ConfigMap]{}
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(poolNames), func(s string) string { return s }).Draw(t, "initial indices") {
			active[name], initial[name] = true, pool[name]
		}
		idx := must(New(Options[*corev1.ConfigMap]{Indexers: initial, DetectMutations: rapid.Bool().Draw(t, "detect")}))
		model := map[informer.Key]*corev1.ConfigMap{}

		// rejects reports whether an active index fails on obj.
		rejects := func(obj *corev1.ConfigMap) bool { return active["picky"] && obj.Labels["app"] == "bad" }
		upsert := func(t *rapid.T, write func(*corev1.ConfigMap) error) {
			obj := objects.Draw(t, "object")
			err := write(obj)
			if rejects(obj) {
				require.ErrorIs(t, err, errRejected)
				return
			}
			require.NoError(t, err)
			model[keyOfCM(obj)] = obj
		}

		t.Repeat(map[string]func(*rapid.T){
			"Add":    func(t *rapid.T) { upsert(t, idx.Add) },
			"Update": func(t *rapid.T) { upsert(t, idx.Update) },
			"Delete": func(t *rapid.T) {
				obj := objects.Draw(t, "object")
				require.NoError(t, idx.Delete(obj))
				delete(model, keyOfCM(obj))
			},
			"Add typed nil": func(t *rapid.T) {
				require.Error(t, idx.Add(nil))
			},
			"Replace": func(t *rapid.T) {
				objs := rapid.SliceOfN(objects, 0, 6).Draw(t, "objects")
				next := map[informer.Key]*corev1.ConfigMap{}
				valid := true
				for _, obj := range objs {
					if _, dup := next[keyOfCM(obj)]; dup || rejects(obj) {
						valid = false
					}
					next[keyOfCM(obj)] = obj
				}
				err := idx.Replace(objs)
				if !valid {
					require.Error(t, err)
					return
				}
				require.NoError(t, err)
				model = next
			},
			"AddIndexers": func(t *rapid.T) {
				names := rapid.SliceOfNDistinct(rapid.SampledFrom(poolNames), 1, 2, func(s string) string { return s }).Draw(t, "names")
				add := map[string]IndexFunc[*corev1.ConfigMap]{}
				valid := true
				for _, name := range names {
					add[name] = pool[name]
					if active[name] {
						valid = false // already there
					}
					if name == "picky" {
						for _, obj := range model {
							valid = valid && obj.Labels["app"] != "bad"
						}
					}
				}
				err := idx.AddIndexers(add)
				if !valid {
					require.Error(t, err)
					return
				}
				require.NoError(t, err)
				for _, name := range names {
					active[name] = true
				}
			},
			"": func(t *rapid.T) { // the check, after every step
				require.Equal(t, len(model), idx.Len())
				require.ElementsMatch(t, slices.Collect(maps.Keys(model)), idx.ListKeys())
				require.ElementsMatch(t, slices.Collect(maps.Values(model)), idx.List())
				for k, want := range model {
					got, ok := idx.Get(k)
					require.True(t, ok, "Get(%s)", k)
					require.Same(t, want, got, "Get(%s)", k)
				}
				for _, name := range poolNames {
					require.Equal(t, active[name], idx.HasIndex(name), "HasIndex(%q)", name)
				}
				requireExact(t, idx)
				if idx.detect {
					require.NoError(t, idx.CheckMutations())
				}
			},
		})
	})
}
