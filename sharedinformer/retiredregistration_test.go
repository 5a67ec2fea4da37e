package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// TestAFactoryWaitGivenTheHandlerOfAnInformerRetiredUnsyncedDoesNotWaitOutSyncTimeout:
// term 1's informer of namespace "forbidden" never syncs (403) and stops
// with its Start ctx; term 2 runs an informer of "default" and waits,
// given (as a controller that kept its Registrations would) term 1's
// handler's Registration. The factory retires term 1's informer and
// never counts it; before 494aa28 this wait failed at once, naming it
// ("stopped when the ctx given to Start ended"). Now its Registration,
// whose informer will never run again and was never released, is waited
// for until SyncTimeout: a released informer's handlers are skipped
// (releasedSignal), a retired one's are not.
//
// Passing: the wait returns at once (an error naming the stopped
// informer, or nil as for a released one), not after SyncTimeout.
func TestAFactoryWaitGivenTheHandlerOfAnInformerRetiredUnsyncedDoesNotWaitOutSyncTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if strings.Contains(r.URL.Path, "/namespaces/forbidden/") {
				return fakeapiserver.Fault{Status: http.StatusForbidden}
			}
			return fakeapiserver.Fault{}
		})
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
			SyncTimeout: 10 * time.Minute,
			Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)

		term1, end1 := context.WithCancel(t.Context())
		stuck, err := sharedinformer.InformerFor[*corev1.ConfigMap](term1, f, sharedinformer.InNamespace("forbidden"))
		require.NoError(t, err)
		reg, err := stuck.AddEventHandler(&recorder{})
		require.NoError(t, err)
		f.Start(term1)
		time.Sleep(time.Second)
		end1()
		f.Wait()

		term2, end2 := context.WithCancel(t.Context())
		defer func() { end2(); f.Wait() }()
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		f.Start(term2)

		began := time.Now()
		err = f.WaitForCacheSync(term2, reg)
		waited := time.Since(began)
		require.Less(t, waited, time.Minute, "the wait for the handler of an informer that stopped for good lasted %v (SyncTimeout), then: %v", waited, err)
	})
}
