package sharedinformer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// An object created in a state an IndexFunc rejects never enters the
// cache, and no handler hears of it (OnAdd: "obj is new to this
// handler"). When its delete comes in a later pop, the DeltaFIFO drops it
// as the delete of a key nobody knows. But when the create and the
// delete are queued under one key before the informer pops it, process
// now applies the delete after the rejected add (2426fd2), and every
// handler gets OnDelete for an object it was never told of: a handler
// counting its objects (adds minus deletes), or lowering an expectation
// per delete, goes wrong, and whether it does depends on how the
// informer's pops happened to batch the same two events.
func TestAHandlerHearsNoDeleteOfAnObjectTheIndexRejectedAtItsCreate(t *testing.T) {
	s := newRejectingInformer(t, "x")

	// x's rejection holds the pop loop until a's create and delete are
	// both queued.
	s.holdPopsAtX(t)
	_, err := s.lw.Create(badConfigMap("a")) // rejected by the index: never cached, never told
	require.NoError(t, err)
	require.NoError(t, s.lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	s.releaseOnceADeleteQueued(t)
	_, err = s.lw.Create(configMap("z")) // a marker: everything before it was handed over
	require.NoError(t, err)

	require.Eventually(t, func() bool { return slices.Contains(s.rec.snapshot(), "add z") }, hangGuard, 5*time.Millisecond)

	require.Equal(t, []string{"add x (initial)", "add z"}, s.rec.snapshot(),
		"a was rejected at its create, never cached and never told, but the handler is told it was deleted")
}
