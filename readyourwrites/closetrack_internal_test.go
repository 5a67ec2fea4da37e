package readyourwrites

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// With OpaqueResourceVersions, Track registers a handler on the
// informer, which usually outlives the guard (a guard is made for each
// leader term). Close removes it: a guard per term leaves nothing behind
// on the informer. A Track after Close registers nothing and fails its
// Wrote. (Found by a review: each term left a handler and its goroutine.)
func TestClosingAGuardRemovesTheHandlersItsTrackRegistered(t *testing.T) {
	inf := runningInformer(t)
	g, err := New(Options{OpaqueResourceVersions: true})
	require.NoError(t, err)
	c := Track(g, inf)
	require.NoError(t, c.trackErr)
	g.Close()
	select {
	case <-c.registration.Stopped():
	case <-time.After(time.Minute): // a guard: it stops at once, or never
		t.Fatal("the guard is closed, and the handler Track registered still runs")
	}
	require.True(t, errors.Is(c.registration.Err(), si.ErrHandlerRemoved), "its handler ended with %v", c.registration.Err())

	late := Track(g, inf)
	require.Nil(t, late.registration, "nothing registered after Close")
	answer := &corev1.ConfigMap{}
	answer.Namespace, answer.Name, answer.ResourceVersion = "demo", "settings", "7"
	require.ErrorContains(t, late.Wrote(informer.Key{Namespace: "demo", Name: "web"}, answer), "the guard is closed")
}
