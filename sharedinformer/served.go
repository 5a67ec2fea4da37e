package sharedinformer

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/listwatch/informer/reflector"
)

// servedAnswerAge is how long one answer of discovery serves every
// informer of the factory that asks about the same group and version (or
// the same list of groups). It bounds the rate of discovery requests,
// however many informers of a deleted group ask at once; only an
// informer's look right after its own "gone" wants newer answers (see
// served).
const servedAnswerAge = time.Second

// servedResources answers the reflector's Options.Served for every
// informer of a factory: does the server still serve this resource, in
// this version or another? It asks discovery, never a cache older than
// servedAnswerAge, so a 404 is judged by what the server says now. An
// answer that a resource is not served also clears the factory's cached
// discovery, so that the RESTMapper forgets it too.
type servedResources struct {
	client discovery.DiscoveryInterfaceWithContext
	// forget clears what the factory's RESTMapper cached of discovery.
	forget func()

	// turn is held by the one check asking at a time (the answers are
	// shared); a check waiting for it gives up when its context ends, so
	// a request that hangs holds up no informer being stopped.
	turn    chan struct{}
	answers map[schema.GroupVersion]servedAnswer // guarded by turn
	groups  groupsAnswer                         // guarded by turn
	// asked counts the requests made, in order: an answer's seq orders
	// it among the others where times cannot (every request of one
	// instant shares its time in a synctest bubble). Guarded by turn.
	asked uint64
}

// servedAnswer is one discovery answer for a group and version: the
// resources it lists, or the error asking gave (a 404: nothing is served
// in that group and version).
type servedAnswer struct {
	at        time.Time
	seq       uint64 // the order it was asked in
	resources map[string]bool
	err       error
}

// groupsAnswer is one discovery answer for the list of groups: each
// group's versions, preferred first.
type groupsAnswer struct {
	at       time.Time
	seq      uint64 // the order it was asked in
	versions map[string][]string
	err      error
}

func newServedResources(client discovery.DiscoveryInterfaceWithContext, forget func()) *servedResources {
	return &servedResources{
		client: client, forget: forget, turn: make(chan struct{}, 1),
		answers: map[schema.GroupVersion]servedAnswer{},
	}
}

// For returns the Served function of one informer of gvr. It remembers
// that informer's last "gone" (see served).
func (s *servedResources) For(gvr schema.GroupVersionResource) func(context.Context) (reflector.Serving, error) {
	// goneAt is how many requests had been made when this informer was
	// last told "gone"; 0 once told anything else. Guarded by s.turn.
	var goneAt uint64
	return func(ctx context.Context) (reflector.Serving, error) { return s.served(ctx, gvr, &goneAt) }
}

// served reports whether discovery lists gvr and, if not, in which other
// versions of its group it lists gvr's resource: a CRD that moved to
// another version deleted none of its objects by moving. Any failure to
// ask other than a 404 is an error, which the reflector takes as "it may
// be served".
//
// "Gone" is the answer that deletes, and the reflector believes it only
// when its next look, BackoffInitial later, gives it again. That look
// must not reuse the answers behind the first, or it would only repeat
// them. So an informer's look after its own "gone" (*goneAt) is judged by
// answers asked since: by it, or by any other informer meanwhile. Every
// other look takes answers up to servedAnswerAge old, shared by all the
// informers, which bounds the rate of discovery requests however many
// informers of a deleted group ask. A look that fails, a look cut short
// by its caller's context included, changes nothing: the "gone" before it
// still wants answers newer than itself.
func (s *servedResources) served(ctx context.Context, gvr schema.GroupVersionResource, goneAt *uint64) (answer reflector.Serving, err error) {
	if err := ctx.Err(); err != nil {
		return reflector.Serving{}, err // a stopped informer asks nothing
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return reflector.Serving{}, ctx.Err()
	}
	defer func() { <-s.turn }()
	answer, err = s.judgeLocked(ctx, gvr, *goneAt)
	switch {
	case err != nil: // cannot tell
	case !answer.Served && len(answer.Elsewhere) == 0:
		*goneAt = s.asked
	default:
		*goneAt = 0
	}
	return answer, err
}

// judgeLocked is served's verdict, from answers asked after the
// notBefore'th request. The caller holds turn.
func (s *servedResources) judgeLocked(ctx context.Context, gvr schema.GroupVersionResource, notBefore uint64) (reflector.Serving, error) {
	answer := reflector.Serving{Version: gvr.Version}
	served, fresh, err := s.inVersionLocked(ctx, gvr, notBefore+1)
	if served || err != nil {
		answer.Served = served
		return answer, err
	}
	if fresh {
		s.forget()
	}
	// Where else it is served is judged by answers no older than the "no"
	// for this version: an older list of the group's versions may name
	// only this one, from before the resource moved back to another, and
	// a resource that moved would look gone, its objects deleted.
	// Answers are ordered by when they were asked, not by their time,
	// which one instant's requests share.
	no := s.answers[gvr.GroupVersion()].seq
	versions, err := s.versionsLocked(ctx, gvr.Group, no)
	if err != nil {
		return answer, err
	}
	if slices.Contains(versions, gvr.Version) {
		// The group is served in this version, by the list asked after
		// the "no": another resource of the group, or this one, moved
		// back in between. Ask again, after the list: judged by the list
		// alone, a resource that moved back would look gone.
		served, _, err := s.inVersionLocked(ctx, gvr, s.groups.seq+1)
		if served || err != nil {
			answer.Served = served
			return answer, err
		}
	}
	for _, v := range versions {
		if v == gvr.Version {
			continue
		}
		served, _, err := s.inVersionLocked(ctx, gvr.GroupResource().WithVersion(v), no)
		if err != nil {
			return answer, err
		}
		if served {
			answer.Elsewhere = append(answer.Elsewhere, v)
		}
	}
	return answer, nil
}

// inVersionLocked reports whether discovery lists gvr, and whether it
// asked the server for the answer, which it does when the answer it has
// is older than servedAnswerAge or than notBefore. A 404 for the group
// and version is a "no" (the last CRD of a group version takes it with
// it). The caller holds turn.
func (s *servedResources) inVersionLocked(ctx context.Context, gvr schema.GroupVersionResource, notBefore uint64) (served, fresh bool, err error) {
	gv := gvr.GroupVersion()
	a, ok := s.answers[gv]
	fresh = !ok || time.Since(a.at) > servedAnswerAge || a.seq < notBefore
	if fresh {
		a = s.ask(ctx, gv)
		if !cutShort(ctx, a.err) {
			s.answers[gv] = a
		}
	}
	if apierrors.IsNotFound(a.err) {
		return false, fresh, nil
	}
	return a.resources[gvr.Resource], fresh, a.err
}

// ask asks the server which resources gv holds. The caller holds turn.
func (s *servedResources) ask(ctx context.Context, gv schema.GroupVersion) servedAnswer {
	s.asked++
	a := servedAnswer{at: time.Now(), seq: s.asked, resources: map[string]bool{}}
	list, err := s.client.ServerResourcesForGroupVersionWithContext(ctx, gv.String())
	if err != nil {
		a.err = err
	} else {
		for _, r := range list.APIResources {
			a.resources[r.Name] = true
		}
	}
	return a
}

// versionsLocked returns the versions discovery lists for group,
// preferred first; none when it lists no such group. It asks again when
// its answer is older than servedAnswerAge or than notBefore. The caller
// holds turn.
func (s *servedResources) versionsLocked(ctx context.Context, group string, notBefore uint64) ([]string, error) {
	if s.groups.versions != nil && time.Since(s.groups.at) <= servedAnswerAge && s.groups.seq >= notBefore {
		return s.groups.versions[group], s.groups.err
	}
	s.asked++
	a := groupsAnswer{at: time.Now(), seq: s.asked, versions: map[string][]string{}}
	var list *metav1.APIGroupList
	list, a.err = s.client.ServerGroupsWithContext(ctx)
	if a.err == nil {
		for _, g := range list.Groups {
			versions := []string{g.PreferredVersion.Version}
			for _, v := range g.Versions {
				if v.Version != g.PreferredVersion.Version {
					versions = append(versions, v.Version)
				}
			}
			a.versions[g.Name] = versions
		}
	}
	if !cutShort(ctx, a.err) {
		s.groups = a
	}
	return a.versions[group], a.err
}

// cutShort reports whether a request failed because its caller's context
// ended. Such a failure says nothing about the server, so it is not kept
// as an answer for the other informers: they would read one informer's
// stop as "discovery cannot tell" for a second.
func cutShort(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil
}
