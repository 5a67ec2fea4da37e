package simulation

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func lifeOf(name, uid, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace(Namespace)
	u.SetName(name)
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	return u
}

// A review proved it: a delete of another life of the key than the one the handler holds
// (a stale delete of uid-1 after uid-1 was replaced by uid-2, a lost
// Update in between) read as a life to handlerStream, which checked only
// that the key is held. A planted bug that delivered the old incarnation's
// delete instead of an update passed "handler stream consistent".
func TestADeleteOfAnotherLifeOfAHeldKeyBreaksTheStream(t *testing.T) {
	s := newHandlerStream()
	if wrong := s.add(lifeOf("a", "uid-2", "20")); wrong != "" {
		t.Fatal(wrong)
	}
	if wrong := s.remove(lifeOf("a", "uid-1", "5")); wrong == "" {
		t.Errorf("a delete of uid-1 (rv 5) while the handler holds uid-2 (rv 20) was accepted")
	}
}
