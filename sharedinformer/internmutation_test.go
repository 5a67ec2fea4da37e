package sharedinformer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// TestAMutationOfOneCachedObjectNeverReachesObjectsCachedAfterIt proves
// what the mutation detector is for (pitfall 2, docs/05): a reader that
// changes a cached object in place is named by CheckMutations, and the
// damage is its own object's until the server's next version of it
// replaces it. The reader here changes the managedFields time of
// "listed" in place (the mistake the detector exists to catch); that
// *metav1.Time is the interner's kept copy of the instant. The review
// that wrote this test found every object cached later with the same
// instant pointed at the changed time ("created", never touched by
// anyone, and the server's next version of "listed"), and CheckMutations
// blind to them, each later snapshot taken from the changed value. The
// interner now checks a kept time against its instant before handing it
// out again.
//
// Passing means every cached object holds what the server sent for it,
// except the one a reader changed, and CheckMutations names every
// cached object that differs from the server's.
func TestAMutationOfOneCachedObjectNeverReachesObjectsCachedAfterIt(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{DetectMutations: true})
	_, err := lw.Create(writtenTogether("listed"))
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	// The mistake: a reader changes the cached object in place.
	cached, err := inf.Lister().Namespace("default").Get("listed")
	require.NoError(t, err)
	cached.ManagedFields[0].Time.Time = cached.ManagedFields[0].Time.Add(time.Hour)
	require.Error(t, inf.Indexer().CheckMutations(), "the detector names the object the reader changed")

	// The server then creates another object written in the same second,
	// and updates the changed one: both come fresh from the server.
	created, err := lw.Create(writtenTogether("created"))
	require.NoError(t, err)
	again := writtenTogether("listed")
	again.Data["v"] = "2"
	updated, err := lw.Update(again)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		c, _ := inf.Lister().Namespace("default").Get("created")
		l, _ := inf.Lister().Namespace("default").Get("listed")
		return c != nil && l != nil && l.ResourceVersion == updated.ResourceVersion
	}, hangGuard, time.Millisecond, "the server's changes never reached the cache")

	mutationErr := inf.Indexer().CheckMutations()
	for _, want := range []*corev1.ConfigMap{created, updated} {
		got, err := inf.Lister().Namespace("default").Get(want.Name)
		require.NoError(t, err)
		require.Equal(t, want.ManagedFields[0].Time.Time, got.ManagedFields[0].Time.Time,
			"%s, never changed by anyone, is cached with a managedFields time the server never sent (CheckMutations: %v)", want.Name, mutationErr)
	}
}
