package simulation

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	si "github.com/listwatch/informer/sharedinformer"
)

// observer is what Observe needs of the term it was given with: where
// to record the informer, and whose stream a wrong event breaks.
type observer struct {
	w            *world
	r            *replica
	ring, member string
	selector     labels.Selector // the term's, which the server's objects are filtered by
}

// Observe hands the simulator an informer of your Controller's term, so
// that it checks it as it checks its own controller's: every event the
// informer's handlers get must follow the ones before ("handler stream
// consistent": an add of an object not held, an update whose old object
// is the last one told, a delete of one held), and at quiescence its
// cache must hold exactly the server's ConfigMaps that the term selects
// (Term.Namespace and Term.Selector) at their resourceVersions ("cache
// equals server"), and what its handler was told must be that cache.
//
// inf must be an informer of the term's ConfigMaps: of Term.Namespace,
// with Term.Selector. An informer of another scope is judged against the
// term's objects all the same: one with another selector fails, but one
// of every namespace passes, since the run's ConfigMaps are all in
// Term.Namespace. Call Observe in
// Controller.Run, before or after starting inf; the last informer
// observed in a Run is the one judged, and a new Run starts with none.
// Without Observe the simulator compares no cache of yours.
func Observe(term Term, inf *si.Informer[*corev1.ConfigMap]) error {
	o := term.observer
	if o == nil {
		return errors.New("simulation: Observe: the Term was not given by the simulator: pass the one Controller.Run is called with")
	}
	if inf == nil {
		return errors.New("simulation: Observe: the informer is nil")
	}
	told := newHandlerStream()
	broke := func(wrong string) { o.w.breakStream(o.r.name, o.ring, o.member, wrong) }
	if _, err := inf.AddEventHandler(replay[*corev1.ConfigMap](told, broke)); err != nil {
		return fmt.Errorf("simulation: Observe: %w", err)
	}
	o.r.setTerm(o.ring, &openTerm{member: o.member, selector: o.selector,
		cache: func() map[string]string { return cacheOf(inf.Lister().List(nil)) }, told: told.byName})
	return nil
}
