package sharedinformer_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A served check's "no" about one group (gone.listwatch.dev) marks the
// mapper stale about that group only: an InformerFor found by its Go
// type in another group (zoo), whose discovery answers 503 meanwhile,
// still finds its resource by what the mapper knew, as it does with no
// mark at all. (Found by a review: the lookup by Go type reset the
// mapper for any group's mark, rebuilding it from zoo's failing
// discovery.)
func TestAnUnrelatedStaleMarkDoesNotFailATypeLookupTheMapperKnewWhileItsGroupsDiscoveryFails(t *testing.T) {
	for _, withMark := range []bool{false, true} {
		var failing atomic.Bool
		notServed := make(chan struct{}, 1)
		_, f := zooFaultServerErrs(t, "Octopus", &failing, func(err error) {
			if errors.Is(err, reflector.ErrNotServed) {
				select {
				case notServed <- struct{}{}:
				default:
				}
			}
		})
		ctx, cancel := context.WithCancel(t.Context())
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f) // the mapper reads discovery in full: Octopus is octopodes
		require.NoError(t, err)
		if withMark {
			// An informer of a resource no CRD serves: its served check says "no",
			// which marks gone.listwatch.dev stale (nothing to do with zoo).
			_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
				sharedinformer.ForResource(schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"}))
			require.NoError(t, err)
			f.Start(ctx)
			select {
			case <-notServed:
			case <-time.After(30 * time.Second):
				t.Fatal("the informer of squids never reported ErrNotServed")
			}
		}
		failing.Store(true) // zoo's discovery answers 503 from here on
		inf, err := sharedinformer.InformerFor[*Octopus](ctx, f)
		cancel()
		f.Wait()
		require.NoError(t, err, "withMark=%v: the mapper knew Octopus is octopodes; zoo's discovery answers 503, and an unrelated group's 'not served' (gone.listwatch.dev) reset the mapper; got %v", withMark, informerName(inf))
	}
}
