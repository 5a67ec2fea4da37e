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

// TestTheLastReleaseOfAnInformerRetiredWhileStillStoppingWaitsForItToStop:
// term 1's informer's handler is in a slow call when term 1's Start ctx
// ends, so the informer has not stopped yet. Its holder releases it at
// the end of its term, as Release's doc asks, and counts on Release's
// promise that the last holder's Release returns once the informer has
// stopped (handlers returned, Registration.Stopped closed, metrics names
// given back). Since 494aa28, any WaitForCacheSync, Start or InformerFor
// of any scope retires it first, and Release of a retired informer
// returns nil at once, though it is still running: the doc's excuse
// ("it stopped ... and InformerFor has since replaced it") holds of
// neither. Before 494aa28 only an InformerFor of its own scope retired
// it, and this Release waited.
//
// Passing: Release does not return nil while the informer's handler is
// still running.
func TestTheLastReleaseOfAnInformerRetiredWhileStillStoppingWaitsForItToStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := factoryWithASlowObject(t, nil, false)

		term1, end1 := context.WithCancel(t.Context())
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](term1, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		reg, inHandler, finish := slowHandler(t, inf)
		f.Start(term1)
		<-inHandler
		end1()
		synctest.Wait()

		// Anything asked of the factory meanwhile (here a sync wait of
		// another goroutine of the same term's shutdown) retires it.
		_ = f.WaitForCacheSync(t.Context())

		released := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			released <- sharedinformer.Release(ctx, f, inf)
		}()
		synctest.Wait()
		select {
		case err := <-released:
			select {
			case <-reg.Stopped():
			default:
				close(finish)
				f.Wait()
				t.Fatalf("the last holder's Release returned %v while the informer's handler was still running (Registration.Stopped open)", err)
			}
		default:
		}
		close(finish)
		f.Wait()
	})
}
