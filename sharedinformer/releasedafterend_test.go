package sharedinformer_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/sharedinformer"
)

// TestAFactoryWaitAfterATermReleasedItsStoppedInformerIsAnError is
// TestAFactoryWaitOnAnInformerStoppedWithStartsContextIsAnError with one
// line more: term 1's holder gives its hold back, as Release's doc asks,
// once its term (and so its Start ctx) has ended, before anything else
// is asked of the factory. Release then takes the stopped informer out
// of the map itself, so nothing is ever retired: `retiredSome` stays
// false and `started` true from term 1. Term 2's Start starts nothing,
// and its wait returns nil with no informer running, where without the
// Release it fails ("ask InformerFor again"). docs/06 promises the wait
// "fails if no informer has run since" an informer stopped because the
// ctx given to Start ended.
//
// Passing: the wait fails, as it does when the stopped informer was
// retired rather than released.
func TestAFactoryWaitAfterATermReleasedItsStoppedInformerIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term2, f, first, _ := reusedFactory(t) // term 1 ended, its informer stopped
		require.NoError(t, sharedinformer.Release(term2, f, first))
		f.Start(term2) // starts nothing: nobody asked InformerFor again
		err := f.WaitForCacheSync(term2)
		require.Error(t, err, "a sync wait with no informer running since term 1's stopped with its Start ctx said synced")
	})
}
