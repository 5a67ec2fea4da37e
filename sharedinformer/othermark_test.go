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

// Another group's stale mark waits for a lookup of its own group: an
// InformerFor in a namespace of a core resource discovery does not list
// (an unstructured one: no kind check) leaves gone.listwatch.dev's mark,
// and the mapper is not rebuilt from zoo's failing discovery: the next
// InformerFor[*Octopus] finds what it knew. (Found by a review: the
// namespace check spent every group's mark.)
func TestAnotherGroupsMarkIsNotSpentByANamespaceCheckInTheCoreGroup(t *testing.T) {
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
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f) // the mapper reads discovery in full
		require.NoError(t, err)
		if withMark {
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
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
			sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("widgetz")), sharedinformer.InNamespace("shop"))
		require.NoError(t, err) // not listed: passes (a CRD may come)
		inf, err := sharedinformer.InformerFor[*Octopus](ctx, f)
		cancel()
		f.Wait()
		require.NoError(t, err, "withMark=%v: the mapper knew Octopus; a core-group namespace check spent gone.listwatch.dev's mark and reset it while zoo's discovery fails; got %v", withMark, informerName(inf))
	}
}
