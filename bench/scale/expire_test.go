package scale

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A library can be synced before it has opened its WATCH; an expiry asked
// for then must reach the watch it opens next, or the relist never comes.
func TestAnExpiryAskedBeforeTheWatchOpensEndsTheNextWatch(t *testing.T) {
	x := &expirer{}
	x.expire() // no watch open yet
	w := x.wrap(watch.NewFake())
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		require.Equal(t, watch.Error, ev.Type)
		assert.EqualValues(t, 410, ev.Object.(*metav1.Status).Code)
	case <-time.After(10 * time.Second):
		t.Fatal("the watch opened after the expiry never received its 410")
	}
}

func TestAnExpiryEndsTheOpenWatchOnly(t *testing.T) {
	x := &expirer{}
	open := x.wrap(watch.NewFake())
	x.expire()
	ev := <-open.ResultChan()
	assert.Equal(t, watch.Error, ev.Type)
	next := x.wrap(watch.NewFake())
	defer next.Stop()
	select {
	case ev := <-next.ResultChan():
		t.Fatalf("a watch opened after the relist got %v: one expiry, one 410", ev.Type)
	case <-time.After(50 * time.Millisecond):
	}
}
