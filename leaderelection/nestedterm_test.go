package leaderelection_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A candidate for an inner Lease runs inside the term of an outer one
// (lead the controller, then stand for one of its parts): Run(ctx) with
// ctx the outer term's leading context. The outer leader is cut off, its
// term ends at its renew deadline, and so does the inner Run's ctx: the
// inner term was ended by its context, which Run documents as nil (the
// release landed: the inner Lease is on a server the inner candidate
// still reaches). It returns an error wrapping ErrLost instead, naming
// the outer Lease ("lease kube-system/outer not renewed within the renew
// deadline"): lead judges the leading context's cause, which a context
// inherits from its parent, so the parent's ErrLost passes for its own.
func TestAnInnerRunWhoseContextEndsWithAnOuterTermReturnsNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var cut atomic.Bool
		outerMem := inMemory(t, fakeapiserver.WithFaults(srv, func(*http.Request) fakeapiserver.Fault {
			return fakeapiserver.Fault{Hang: cut.Load()}
		}))
		innerMem := inMemory(t, srv)

		innerLeading := make(chan struct{}, 1)
		innerDone := make(chan error, 1)
		innerCfg, _ := config(t, innerMem.Config(), "kube-system", "inner", "inner", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { innerLeading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
		})
		innerCfg.ReleaseOnCancel = true
		outerCfg, _ := config(t, outerMem.Config(), "kube-system", "outer", "outer", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { innerDone <- must(leaderelection.New(innerCfg)).Run(ctx) },
			OnStoppedLeading: func() {},
		})
		outerDone := make(chan error, 1)
		go func() { outerDone <- must(leaderelection.New(outerCfg)).Run(t.Context()) }()
		<-innerLeading
		cut.Store(true) // the outer leader can no longer renew

		require.ErrorIs(t, <-outerDone, leaderelection.ErrLost, "the outer term was lost")
		err := <-innerDone
		require.NoError(t, err, "the inner term was ended by its context, and its release landed")
		lease := getLease(t.Context(), t, innerMem.Config(), "kube-system", "inner")
		require.Nil(t, lease.Spec.HolderIdentity, "the inner Lease was released")
	})
}
