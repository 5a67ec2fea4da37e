package sharedinformer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// A change the cache refuses (here the transform rejects it) is applied
// as a refusal: LastSyncResourceVersion, and so WaitFor, moves past it,
// while the cache keeps the version it had and no handler hears of it.
// The docs once said every change up to LastSyncResourceVersion is in
// the indexer and the handlers' buffers.
func TestTheCacheReachesTheResourceVersionOfAChangeItRefusedWithoutHoldingIt(t *testing.T) {
	inf, lw, rec, errs, trace := rejecting(t)
	cached, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	rejected := rejectA(t, lw)
	assertRejectionReported(t, errs, trace, rejected)

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, inf.WaitFor(ctx, rejected.ResourceVersion), "the refused change counts as applied")
	now, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Equal(t, cached.ResourceVersion, now.ResourceVersion, "but the cache holds the version it had, not the refused one")
	assert.Equal(t, []string{"add a (initial)"}, rec.snapshot(), "and no handler hears of the refused change")
}

// The same holds for a change an IndexFunc fails on.
func TestTheCacheReachesTheResourceVersionOfAChangeItsIndexRefusedWithoutHoldingIt(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Indexers: rejectingBad(), OnError: func(error) {}})
	created, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	refused, err := lw.Update(badConfigMap("a"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, inf.WaitFor(ctx, refused.ResourceVersion), "the refused change counts as applied")
	now, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, now.ResourceVersion, "but the cache holds the version it had, not the refused one")
	assert.Equal(t, []string{"add a (initial)"}, rec.snapshot(), "and no handler hears of the refused change")
}
