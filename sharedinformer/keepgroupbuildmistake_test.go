package sharedinformer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// Two goroutines start informers at once on a fresh factory (a
// controller's start-up): one builds the mapper (its /api/v1 read held),
// the other makes a KindError mistake (*Clam over octopodes, which hold
// Octopus, as discovery, the old and the new build all agree). The
// mistake is judged once the build has stored what it read: the mapper
// agrees, so zoo is not marked, and zoo's outage a second later does not
// drop what the mapper knew. (Found by review: a build under way counted
// as disagreeing, and the right informer failed.)
func TestAKindMistakeDuringAnotherCallersBuildKeepsWhatTheMapperKnew(t *testing.T) {
	for _, mistake := range []bool{false, true} {
		z := newZooFaults(t)
		f := zooFactory(t, z.cfg, zooScheme)

		z.holdCore.Store(true)
		done := make(chan error, 1)
		go func() {
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // builds the mapper
			done <- err
		}()
		<-z.coreHeld
		z.holdCore.Store(false)
		octopodes := sharedinformer.ForResource(zooGV.WithResource("octopodes"))
		if mistake {
			_, err := sharedinformer.InformerFor[*Clam](t.Context(), f, octopodes)
			var kindErr *sharedinformer.KindError
			require.ErrorAs(t, err, &kindErr)
		}
		close(z.release)
		require.NoError(t, <-done)

		time.Sleep(1100 * time.Millisecond)
		z.zooFails.Store(true)
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes)
		require.NoError(t, err, "mistake=%v: the mapper knew octopodes hold Octopus; got %v", mistake, informerName(inf))
	}
}
