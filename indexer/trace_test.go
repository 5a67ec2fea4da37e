package indexer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

// recorder is a trace hook that keeps every event as its String form,
// without the time.
type recorder struct{ lines []string }

func (r *recorder) hook(e informer.TraceEvent) {
	if e.Stage != informer.StageIndexer || e.Time.IsZero() {
		panic("indexer events have Stage indexer and a time")
	}
	r.lines = append(r.lines, e.String())
}

func (r *recorder) take() []string {
	lines := r.lines
	r.lines = nil
	return lines
}

func TestTraceReportsEachChangeAndOnlyRealIndexChanges(t *testing.T) {
	var rec recorder
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), Trace: rec.hook}))
	withRV := func(obj *corev1.ConfigMap, rv string) *corev1.ConfigMap { obj.ResourceVersion = rv; return obj }

	for _, step := range []struct {
		what  string
		write func() error
		want  []string
	}{
		{"a first add files the key in every index (the built-in namespace index is the layout: no event)",
			func() error { return idx.Add(withRV(cm("default", "a", "app", "web"), "10")) },
			[]string{
				"indexer    stored  default/a  rv=10  added",
				"indexer    index-changed  default/a  app: [] → [web]",
			}},
		{"an update that changes only a label reports only that index",
			func() error { return idx.Update(withRV(cm("default", "a", "app", "db"), "11")) },
			[]string{
				"indexer    stored  default/a  rv=11  updated",
				"indexer    index-changed  default/a  app: [web] → [db]",
			}},
		{"an update that changes no index value reports only the store",
			func() error { return idx.Update(withRV(cm("default", "a", "app", "db"), "12")) },
			[]string{"indexer    stored  default/a  rv=12  updated"}},
		{"a failed write reports nothing",
			func() error { _ = idx.Add(cm("default", "")); return nil },
			nil},
		{"a delete reports the key leaving every index",
			func() error { return idx.Delete(withRV(cm("default", "a"), "13")) },
			[]string{
				"indexer    deleted  default/a  rv=13",
				"indexer    index-changed  default/a  app: [db] → []",
			}},
		{"deleting an absent key reports nothing",
			func() error { return idx.Delete(cm("default", "a")) },
			nil},
		{"replace reports one event with counts",
			func() error {
				_ = idx.Add(cm("default", "old"))
				_ = idx.Add(cm("default", "kept"))
				rec.take()
				return idx.Replace([]*corev1.ConfigMap{cm("default", "kept"), cm("default", "new1"), cm("default", "new2")})
			},
			[]string{"indexer    replaced  3 objects: 2 added, 1 updated, 1 deleted"}},
		{"AddIndexers reports each new index",
			func() error {
				return idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{"tier": LabelIndexFunc[*corev1.ConfigMap]("tier")})
			},
			[]string{"indexer    index-added  tier: 0 values over 3 objects"}},
	} {
		require.NoError(t, step.write(), step.what)
		assert.Equal(t, step.want, rec.take(), step.what)
	}
}

func TestNoTraceHookMeansNoEventIsBuilt(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	objs := []*corev1.ConfigMap{cm("default", "a", "app", "web"), cm("default", "a", "app", "db")}
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		_ = idx.Update(objs[n%2]) // every write changes the app index
		n++
	})
	var rec recorder
	traced := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), Trace: rec.hook}))
	tracedAllocs := testing.AllocsPerRun(100, func() {
		_ = traced.Update(objs[n%2])
		n++
		rec.lines = rec.lines[:0]
	})
	assert.Less(t, allocs, tracedAllocs, "building events allocates; with no hook that cost is not paid")
}
