package sharedinformer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// TestASuccessorNamedLikeARetiredInformerStillStoppingWaitsForItsName:
// the case WithName's doc gives, a shard member whose label selector
// names its term and whose informer keeps one name across terms, on one
// factory kept across terms (what retirement exists for). Term 1's
// handler is in a slow call when term 1's Start ctx ends, so its
// informer is still stopping when term 2 (from its own goroutine, not an
// informer's) asks for the term-2 scope under the same name. InformerFor
// retires term 1's informer ("stopping until its Run returns so its
// successor waits for its metrics name"), but it waits only for a
// stopping informer of the same key (type and scope), so it makes the
// successor at once and fails with a *metrics.DuplicateError: the
// retired informer still holds the name.
//
// Passing: InformerFor waits, within its ctx, for the retired informer
// holding the name to stop, then makes the successor (no error).
func TestASuccessorNamedLikeARetiredInformerStillStoppingWaitsForItsName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := factoryWithASlowObject(t, map[string]string{"term": "1"}, true)

		term1, end1 := context.WithCancel(t.Context())
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](term1, f, sharedinformer.InNamespace("default"),
			sharedinformer.WithLabels("term=1"), sharedinformer.WithName("member"))
		require.NoError(t, err)
		_, inHandler, finish := slowHandler(t, inf)
		f.Start(term1)
		<-inHandler
		end1()
		synctest.Wait()

		term2, end2 := context.WithTimeout(t.Context(), time.Hour)
		defer func() { end2(); f.Wait() }()
		made := make(chan error, 1)
		go func() {
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"),
				sharedinformer.WithLabels("term=2"), sharedinformer.WithName("member"))
			made <- err
		}()
		synctest.Wait()
		select {
		case err := <-made:
			close(finish)
			require.NoError(t, err, "term 2's InformerFor did not wait for term 1's retired, still stopping informer to give its name back")
			return
		default:
		}
		close(finish)
		require.NoError(t, <-made)
	})
}
