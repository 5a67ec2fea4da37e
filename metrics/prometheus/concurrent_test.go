package prometheus

import (
	"sync"
	"testing"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Many goroutines ask one Provider for the series of one family at once,
// as the stages of several informers and queues do when they start: each
// gets the one vector's child, none an error, and every Add lands in the
// one series. (Without the Provider's lock, -race reports the families
// map, and two goroutines may each make and register a vector.)
func TestAProviderIsSafeForConcurrentUse(t *testing.T) {
	const goroutines, perGoroutine = 16, 100
	reg := prom.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*2)
	for range goroutines {
		wg.Go(func() {
			c, err := p.Counter(adds, []string{"q"})
			if err != nil {
				errs <- err
				return
			}
			if _, err := p.Gauge(depth, []string{"q"}); err != nil {
				errs <- err
			}
			for range perGoroutine {
				c.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	vec := p.families["adds_total"].vec.(*prom.CounterVec)
	assert.Equal(t, float64(goroutines*perGoroutine), testutil.ToFloat64(vec.WithLabelValues("q")))
	assert.Equal(t, 1, testutil.CollectAndCount(reg, "adds_total"), "one series")
}
