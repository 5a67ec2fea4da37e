package reflector_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// KindWatchEnd is a watch that ended normally. A watch that closes
// within ShortWatch without moving the resourceVersion also ends with no
// ERROR event, but it is a failure: traced as KindError (ErrShortWatch),
// with no KindWatchEnd, as KindWatchEnd's doc says. (Found by a docs
// audit: the doc said every watch that ended without an error event was
// a KindWatchEnd.)
func TestAShortWatchIsTracedAsAnErrorNotAsAWatchEnd(t *testing.T) {
	f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.ShortWatch = time.Hour // short however slow the machine
		o.ListerWatcher.(*spy[*corev1.ConfigMap]).onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
			if call == 1 {
				return watch.NewEmptyWatch(), nil // closed at once, nothing delivered
			}
			return nil, nil // the real one, which stays open
		}
	})
	require.Len(t, f.spy.watchCalls(), 2, "the short watch, then the real one")
	assert.Empty(t, f.trace.of(reflector.KindWatchEnd), "the short watch is no watch-end")
	errs := f.trace.of(reflector.KindError)
	require.Len(t, errs, 1)
	assert.True(t, strings.Contains(errs[0].Detail, reflector.ErrShortWatch.Error()), "%s", errs[0].Detail)
}
