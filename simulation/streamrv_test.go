package simulation

import (
	"maps"
	"testing"
)

// sharedinformer promises each handler every change in order, so within
// one life of a key the resourceVersions a handler is given never go
// back. A planted bug: the informer's cache regresses (a relist answered
// from a lagging cache replaces rv 10 with rv 5) and tells the handler
// so, as an update whose old object is the one it holds; the next change
// (rv 11) then starts from rv 5. Every update's old object is the last
// given, and at quiescence the handler holds what the cache holds, so
// "handler stream consistent" must come from the update to rv 5 itself.
func TestAnUpdateToAnOlderResourceVersionBreaksTheStream(t *testing.T) {
	s := newHandlerStream()
	var wrongs []string
	for _, wrong := range []string{
		s.add(lifeOf("a", "uid-1", "10")),
		s.update(lifeOf("a", "uid-1", "10"), lifeOf("a", "uid-1", "5")), // back in time: the planted bug
		s.update(lifeOf("a", "uid-1", "5"), lifeOf("a", "uid-1", "11")),
	} {
		if wrong != "" {
			wrongs = append(wrongs, wrong)
		}
	}
	if cache := map[string]string{"a": "11"}; len(wrongs) == 0 && maps.Equal(s.byName(), cache) {
		t.Errorf("an update of a from rv 10 to rv 5 (the handler was told the past as the present) passed the stream check, and the handler holds what the cache holds (%v): the planted bug goes unnoticed", cache)
	}
}
