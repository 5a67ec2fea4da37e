package sharedinformer_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// One trace hook sees a change travel through every stage, ending with
// its delivery to each handler, which says how many notifications still
// wait for that handler.
func TestOneTraceHookFollowsAChangeFromTheWatchToEachHandler(t *testing.T) {
	var mu sync.Mutex
	var events []informer.TraceEvent
	hook := func(e informer.TraceEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Trace: hook})
	for _, name := range []string{"audit", "metrics"} {
		_, err := inf.AddEventHandler(&recorder{}, sharedinformer.HandlerOptions{Name: name})
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)
	_, err := lw.Create(configMap("traced"))
	require.NoError(t, err)

	delivered := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, e := range events {
			if e.Stage == informer.StageListener && e.Key == "default/traced" {
				out = append(out, e.Detail)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(delivered()) == 2 }, hangGuard, time.Millisecond)
	assert.ElementsMatch(t, []string{"add to audit, 0 waiting", "add to metrics, 0 waiting"}, delivered())

	mu.Lock()
	defer mu.Unlock()
	var stages []informer.Stage
	for _, e := range events {
		if e.Key == "default/traced" && !slices.Contains(stages, e.Stage) {
			stages = append(stages, e.Stage)
		}
	}
	assert.Equal(t, []informer.Stage{informer.StageReflector, informer.StageFIFO, informer.StageIndexer, informer.StageListener}, stages,
		"the change is seen by each stage in the order of the data flow")
	for _, e := range events {
		assert.False(t, strings.Contains(e.Detail, "%!"), "badly formatted detail: %q", e.Detail)
	}
}
