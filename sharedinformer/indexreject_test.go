package sharedinformer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// An update whose object an IndexFunc rejects is dropped, with an error
// to OnError: the cache keeps the version it had. But a delete that the
// watch delivered right after it, for the same key, is a different
// change: the server no longer has the object, and the cache must not
// keep it. When both are queued under one key before the informer pops
// it, the rejected update must not take the delete down with it.
func TestADeleteQueuedBehindAnUpdateTheIndexRejectsStillDeletesTheObject(t *testing.T) {
	s := newRejectingInformer(t, "a", "x")
	<-s.processedA // a's add, of the initial list

	// The first rejection (of x) holds the pop loop, outside the
	// DeltaFIFO's lock, until a's two changes are queued.
	s.holdPopsAtX(t)
	_, err := s.lw.Update(badConfigMap("a"))
	require.NoError(t, err)
	require.NoError(t, s.lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	s.releaseOnceADeleteQueued(t)

	_, cached := s.inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.False(t, cached, "the server deleted a, and the watch said so, but the cache still holds it")
	s.rec.eventually(t, "add a (initial)", "add x (initial)", "delete a")
}
