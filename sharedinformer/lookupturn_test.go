package sharedinformer_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// InformerFor promises that ctx bounds its discovery lookups. The
// factory's RESTMapper, as client-go's DeferredDiscoveryRESTMapper, holds
// a mutex for the whole discovery fetch of the caller that fills it, with that caller's context, and a second
// caller waits on the mutex where its own context cannot reach it. Here
// the first caller's fetch hangs (as one to a stalled server does until
// client-go's 32 s discovery timeout), and the second caller's context
// has already ended: it must return that at once, not when the fetch
// ends. (Real time, not a synctest bubble: a goroutine waiting for a
// sync.Mutex is not durably blocked. Nothing here races a clock: the
// hang lasts until the test ends, so the second call returns either
// because its context ended or not before the guard.)
func TestAnInformerForWaitingForAnotherOnesHangingDiscoveryReturnsWhenItsContextEnds(t *testing.T) {
	srv := fakeapiserver.New()
	release := make(chan struct{})
	hanging := make(chan struct{})
	hangOnce := sync.OnceFunc(func() { close(hanging) })
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if r.URL.Path == "/api/v1" { // the mapper's fetch of the core group
			hangOnce()
			return fakeapiserver.Fault{Hang: true, Until: release}
		}
		return fakeapiserver.Fault{}
	}))
	defer mem.Close()
	defer close(release)

	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)

	first := make(chan error, 1)
	go func() {
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
		first <- err
	}()
	<-hanging

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	second := make(chan error, 1)
	go func() {
		_, err := sharedinformer.InformerFor[*corev1.Pod](ended, f)
		second <- err
	}()
	select {
	case err := <-second:
		require.Error(t, err)
		require.True(t, errors.Is(err, context.Canceled), "want the context's end, got %v", err)
	case <-time.After(30 * time.Second): // a guard: it returns in microseconds, or only when the hang ends, at the test's end
		t.Fatal("an InformerFor whose context had ended still waits, behind another InformerFor's discovery fetch that hangs")
	}
}
