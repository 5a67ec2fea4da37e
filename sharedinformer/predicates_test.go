package sharedinformer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/sharedinformer"
)

// calls is a Handler that records each notification as a short string.
type calls []string

func (c *calls) OnAdd(obj *corev1.ConfigMap, _ bool)    { *c = append(*c, "add "+obj.Name) }
func (c *calls) OnUpdate(_, obj *corev1.ConfigMap)      { *c = append(*c, "update "+obj.Name) }
func (c *calls) OnDelete(obj *corev1.ConfigMap, _ bool) { *c = append(*c, "delete "+obj.Name) }

func withGeneration(name string, generation int64) *corev1.ConfigMap {
	cm := configMap(name)
	cm.Generation = generation
	return cm
}

func withLabels(name string, kv ...string) *corev1.ConfigMap {
	cm := configMap(name)
	cm.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		cm.Labels[kv[i]] = kv[i+1]
	}
	return cm
}

func TestGenerationChangedDropsStatusOnlyUpdatesAndResyncsButNoAddOrDelete(t *testing.T) {
	var got calls
	h := sharedinformer.Filtered[*corev1.ConfigMap](&got, sharedinformer.GenerationChanged[*corev1.ConfigMap]())
	h.OnAdd(withGeneration("a", 1), false)
	h.OnUpdate(withGeneration("a", 1), withGeneration("status-only", 1))
	resync := withGeneration("a", 1)
	h.OnUpdate(resync, resync)
	h.OnUpdate(withGeneration("a", 1), withGeneration("spec-changed", 2))
	h.OnDelete(withGeneration("a", 2), true)
	assert.Equal(t, calls{"add a", "update spec-changed", "delete a"}, got)
}

func TestLabelsChangedPassesOnlyUpdatesThatChangeLabels(t *testing.T) {
	var got calls
	h := sharedinformer.Filtered[*corev1.ConfigMap](&got, sharedinformer.LabelsChanged[*corev1.ConfigMap]())
	h.OnUpdate(withLabels("same", "app", "web"), withLabels("same", "app", "web"))
	h.OnUpdate(withLabels("a", "app", "web"), withLabels("relabelled", "app", "db"))
	assert.Equal(t, calls{"update relabelled"}, got)
}

func TestMatchingLabelsHearsAnObjectLeaveTheSelectorAndEveryDelete(t *testing.T) {
	var got calls
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	h := sharedinformer.Filtered[*corev1.ConfigMap](&got, sharedinformer.MatchingLabels[*corev1.ConfigMap](web))
	h.OnAdd(withLabels("w", "app", "web"), false)
	h.OnAdd(withLabels("d", "app", "db"), false)
	h.OnUpdate(withLabels("d", "app", "db"), withLabels("d", "app", "db"))
	h.OnUpdate(withLabels("w", "app", "web"), withLabels("left", "app", "db"))
	h.OnDelete(withLabels("d", "app", "db"), false)
	assert.Equal(t, calls{"add w", "update left", "delete d"}, got)
}

func TestFilteredPassesOnlyWhatEveryPredicatePasses(t *testing.T) {
	var got calls
	h := sharedinformer.Filtered[*corev1.ConfigMap](&got,
		sharedinformer.MatchingLabels[*corev1.ConfigMap](labels.SelectorFromSet(labels.Set{"app": "web"})),
		sharedinformer.LabelsChanged[*corev1.ConfigMap]())
	h.OnUpdate(withLabels("a", "app", "web"), withLabels("a", "app", "web"))         // matches, labels same
	h.OnUpdate(withLabels("b", "app", "db"), withLabels("b", "app", "db", "x", "y")) // labels changed, never matched
	h.OnUpdate(withLabels("c", "app", "web"), withLabels("c", "app", "web", "x", "y"))
	assert.Equal(t, calls{"update c"}, got)
}

func TestAddEventHandlerTakesNoOptionsOrOneButNotTwo(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	reg, err := inf.AddEventHandler(&calls{})
	assert.NoError(t, err)
	assert.Equal(t, "handler-1", reg.Name())
	_, err = inf.AddEventHandler(&calls{}, sharedinformer.HandlerOptions{Name: "a"}, sharedinformer.HandlerOptions{Name: "b"})
	assert.ErrorContains(t, err, "2 HandlerOptions given; give at most one")
}

func TestMatchingLabelsWithANilSelectorMatchesNothingButStillPassesDeletes(t *testing.T) {
	var got calls
	h := sharedinformer.Filtered[*corev1.ConfigMap](&got, sharedinformer.MatchingLabels[*corev1.ConfigMap](nil))
	h.OnAdd(withLabels("a", "app", "web"), false)
	h.OnDelete(withLabels("a", "app", "web"), false)
	assert.Equal(t, calls{"delete a"}, got)
}

func TestTwoHandlersCannotShareANameWhileBothAreRegistered(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	reg, err := inf.AddEventHandler(&calls{}, sharedinformer.HandlerOptions{Name: "audit"})
	require.NoError(t, err)
	_, err = inf.AddEventHandler(&calls{}, sharedinformer.HandlerOptions{Name: "audit"})
	assert.ErrorContains(t, err, `a handler named "audit" is registered already`)
	require.NoError(t, inf.RemoveEventHandler(reg))
	_, err = inf.AddEventHandler(&calls{}, sharedinformer.HandlerOptions{Name: "audit"})
	assert.NoError(t, err, "a removed handler's name is free again")
}

// A filter must never hide a delete (a reconcile that never hears its
// object go away strands what it made for it), so every predicate here
// passes every delete, whatever the object, known or not.
func TestEveryPredicatePassesEveryDelete(t *testing.T) {
	for name, p := range map[string]sharedinformer.Predicate[*corev1.ConfigMap]{
		"GenerationChanged":   sharedinformer.GenerationChanged[*corev1.ConfigMap](),
		"LabelsChanged":       sharedinformer.LabelsChanged[*corev1.ConfigMap](),
		"MatchingLabels":      sharedinformer.MatchingLabels[*corev1.ConfigMap](labels.SelectorFromSet(labels.Set{"app": "web"})),
		"MatchingLabels(nil)": sharedinformer.MatchingLabels[*corev1.ConfigMap](nil),
	} {
		t.Run(name, func(t *testing.T) {
			var got calls
			h := sharedinformer.Filtered[*corev1.ConfigMap](&got, p)
			h.OnDelete(withLabels("web", "app", "web"), false)
			h.OnDelete(withLabels("db", "app", "db"), true)
			h.OnDelete(withGeneration("plain", 7), false)
			assert.Equal(t, calls{"delete web", "delete db", "delete plain"}, got)
		})
	}
}
