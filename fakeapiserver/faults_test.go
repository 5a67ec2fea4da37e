package fakeapiserver_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// Each fault does what it says, on simulated time: a status answers
// instead of the server, latency delays, a hang lasts until the
// client's timeout, a drop breaks the connection, and a lost answer
// breaks it after the server acted.
func TestFaultsAnswerForTheServerOnSimulatedTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var fault fakeapiserver.Fault
		set := func(f fakeapiserver.Fault) { mu.Lock(); fault = f; mu.Unlock() }
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(*http.Request) fakeapiserver.Fault { mu.Lock(); defer mu.Unlock(); return fault }))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		get := func(timeout time.Duration) (error, time.Duration) {
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			start := time.Now()
			err := client.Get().Resource("namespaces").Name("default").MaxRetries(0).Do(ctx).Error()
			return err, time.Since(start)
		}

		set(fakeapiserver.Fault{Status: http.StatusServiceUnavailable})
		err, _ = get(time.Minute)
		assert.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
		set(fakeapiserver.Fault{Status: http.StatusConflict})
		err, _ = get(time.Minute)
		assert.True(t, apierrors.IsConflict(err), "%v", err)

		set(fakeapiserver.Fault{Latency: 3 * time.Second})
		err, took := get(time.Minute)
		assert.NoError(t, err)
		assert.Equal(t, 3*time.Second, took, "simulated time is exact")

		set(fakeapiserver.Fault{Hang: true})
		err, took = get(10 * time.Second)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 10*time.Second, took)

		set(fakeapiserver.Fault{Drop: true})
		err, _ = get(time.Minute)
		assert.Error(t, err)

		set(fakeapiserver.Fault{AnswerLost: true})
		err = client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).
			Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"landed"}}`)).Do(t.Context()).Error()
		assert.Error(t, err, "the create's answer was lost")
		set(fakeapiserver.Fault{})
		assert.NoError(t, client.Get().Namespace("default").Resource("configmaps").Name("landed").Do(t.Context()).Error(), "yet it landed")

		set(fakeapiserver.Fault{})
		err, _ = get(time.Minute)
		assert.NoError(t, err)
	})
}

// A hung write (a request with a body) ends when its client gives up,
// and Close ends every request still hung: no handler outlives the
// server, so a bubble that closes it exits cleanly. Before, a hung
// handler that never read its body never noticed either, and the
// bubble ended in "blocked goroutines remain".
func TestAHungWriteEndsWhenItsClientGivesUpOrTheServerCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault {
				return fakeapiserver.Fault{Hang: r.Method == http.MethodPost}
			}))
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		create := func(ctx context.Context) error {
			return client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).
				Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)).Do(ctx).Error()
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		require.ErrorIs(t, create(ctx), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))

		go func() { _ = create(context.Background()) }() // a client that never gives up
		synctest.Wait()
		mem.Close()
	})
}

// A hang with Until ends when Until closes: the request is then served,
// late, as a stalled server that recovers serves what it held; a write
// lands.
func TestAHangWithUntilServesTheRequestWhenUntilCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recovered := make(chan struct{})
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault {
				return fakeapiserver.Fault{Hang: r.Method == http.MethodPost, Until: recovered}
			}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			done <- client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).
				Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`)).Do(t.Context()).Error()
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, done, "answered while the server stalls")
		close(recovered)
		require.NoError(t, <-done)
		require.NoError(t, client.Get().Namespace("default").Resource("configmaps").Name("late").Do(t.Context()).Error())
	})
}

// With Until and Latency, the latency comes after the hang ends: held
// requests let go at one instant are then served apart, each after its
// own delay (the simulator orders them so).
func TestAHeldRequestWaitsItsLatencyAfterTheHangEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recovered := make(chan struct{})
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(*http.Request) fakeapiserver.Fault {
				return fakeapiserver.Fault{Hang: true, Until: recovered, Latency: 2 * time.Second}
			}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			done <- client.Get().Resource("namespaces").Name("default").MaxRetries(0).Do(t.Context()).Error()
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, done, "answered while the server stalls")
		close(recovered)
		let := time.Now()
		require.NoError(t, <-done)
		assert.Equal(t, 2*time.Second, time.Since(let), "served its latency after the hang ended")
	})
}

// A delayed write whose client gives up during the delay is not served,
// as Latency's doc says: the same holds for a hang, by the same means
// (the body is read first, so net/http notices the client leaving).
func TestADelayedWriteWhoseClientGaveUpIsNotServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault {
				if r.Method == http.MethodPost {
					return fakeapiserver.Fault{Latency: 3 * time.Second}
				}
				return fakeapiserver.Fault{}
			}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err = client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).
			Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gave-up"}}`)).Do(ctx).Error()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		time.Sleep(10 * time.Second) // well past the latency
		synctest.Wait()
		err = client.Get().Namespace("default").Resource("configmaps").Name("gave-up").Do(t.Context()).Error()
		require.True(t, apierrors.IsNotFound(err), "the write whose client gave up during its latency was served: err=%v", err)
	})
}
