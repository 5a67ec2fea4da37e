package sharedinformer

import (
	"context"
	"slices"
	"sync/atomic"
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
// however many informers ask: about one list of groups and one or two
// requests for a group version (before the list, and again after it when
// the list names it) a second, or per reflector BackoffInitial while
// informers of a deleted resource take their second looks, which want
// answers newer than their first (see served).
const servedAnswerAge = time.Second

// servedResources answers the reflector's Options.Served for every
// informer of a factory: does the server still serve this resource, in
// this version or another? It asks discovery, never a cache older than
// servedAnswerAge, so a 404 is judged by what the server says now. An
// answer that a resource is not served also clears the factory's cached
// discovery, so that the RESTMapper forgets it too.
type servedResources struct {
	client discovery.DiscoveryInterfaceWithContext
	// forget clears what the factory's RESTMapper cached of discovery. It
	// runs on a goroutine of its own, one at a time (forgetting): a reset
	// waits for any discovery fetch the mapper has in flight, which no
	// context of ours reaches.
	forget     func()
	forgetting atomic.Bool

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

// lists reports whether the answer lists resource.
func (a servedAnswer) lists(resource string) bool { return a.resources[resource] }

// failed is the answer's error, but nil for a 404: nothing is served in
// that group and version, a "no" for every resource (the last CRD of a
// group version takes it with it).
func (a servedAnswer) failed() error {
	if apierrors.IsNotFound(a.err) {
		return nil
	}
	return a.err
}

// groupsAnswer is one discovery answer for the list of groups: each
// group's versions, preferred first.
type groupsAnswer struct {
	at       time.Time
	seq      uint64 // the order it was asked in
	versions map[string][]string
	err      error
	// checked holds, for a group version this list names, the look that
	// asked the version again after it (judgeLocked): a "no", the list,
	// a "no" again. A later look whose own answer is that second "no"
	// may judge by the same three answers, as that look did.
	checked map[schema.GroupVersion]checkedVersion
}

// checkedVersion is a "no" asked before a list of groups (first) and the
// one asked again after it (again).
type checkedVersion struct {
	first, again servedAnswer
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
	// last told "gone". Guarded by s.turn.
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
// when it looks again BackoffInitial later (reflector.SecondLook) and is
// told so again. That second look must not reuse the answers behind the
// first, or it would only repeat them: it is judged by answers asked
// after this informer's last "gone" (*goneAt), by it or by any other
// informer meanwhile. Every other look takes answers up to
// servedAnswerAge old, shared by all the informers, which bounds the rate
// of discovery requests however many informers ask.
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
	var after uint64 // the answers must have been asked after this request
	if reflector.SecondLook(ctx) {
		after = *goneAt
	}
	answer, err = s.judgeLocked(ctx, gvr, after)
	if err == nil && !answer.Served && len(answer.Elsewhere) == 0 {
		*goneAt = s.asked
	}
	return answer, err
}

// judgeLocked is served's verdict, from answers asked after the after'th
// request. The caller holds turn.
func (s *servedResources) judgeLocked(ctx context.Context, gvr schema.GroupVersionResource, after uint64) (reflector.Serving, error) {
	answer := reflector.Serving{Version: gvr.Version}
	own, fresh, err := s.gvLocked(ctx, gvr.GroupVersion(), after+1)
	if err != nil || own.lists(gvr.Resource) {
		answer.Served = err == nil
		return answer, err
	}
	if fresh {
		s.forgetAsync()
	}
	// Where else it is served is judged by answers no older than the "no"
	// for this version: an older list of the group's versions may name
	// only this one, from before the resource moved back to another, and
	// a resource that moved would look gone, its objects deleted.
	// Answers are ordered by when they were asked, not by their time,
	// which one instant's requests share. Two "no"s do not prove the
	// resource unserved in between, so a list between them serves only
	// the look that asked it, and later looks whose own answer is its
	// second "no" (checkedLocked).
	since := max(own.seq, after+1)
	gv := gvr.GroupVersion()
	if s.checkedLocked(gv, gvr.Resource, own, after) {
		since = s.groups.seq
	}
	versions, listed, err := s.versionsLocked(ctx, gvr.Group, since)
	if err != nil {
		return answer, err
	}
	if slices.Contains(versions, gvr.Version) {
		// The group is served in this version, by the list asked after
		// the "no": another resource of the group, or this one, moved
		// back in between. Ask again, after the list: judged by the list
		// alone, a resource that moved back would look gone.
		again, _, err := s.gvLocked(ctx, gv, listed+1)
		if err != nil || again.lists(gvr.Resource) {
			answer.Served = err == nil
			return answer, err
		}
		if again.seq != own.seq && s.groups.seq == listed {
			s.groups.checked[gv] = checkedVersion{first: own, again: again}
		}
	}
	for _, v := range versions {
		if v == gvr.Version {
			continue
		}
		other, _, err := s.gvLocked(ctx, schema.GroupVersion{Group: gvr.Group, Version: v}, since)
		if err != nil {
			return answer, err
		}
		if other.lists(gvr.Resource) {
			answer.Elsewhere = append(answer.Elsewhere, v)
		}
	}
	return answer, nil
}

// forgetAsync runs forget on a goroutine of its own, unless one is
// running already: what it clears is cleared for this "no" too once it
// returns.
func (s *servedResources) forgetAsync() {
	if !s.forgetting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.forgetting.Store(false)
		s.forget()
	}()
}

// checkedLocked reports whether the stored list of groups, with the "no"
// for gv asked before it and the one asked again after it, is a look's
// whole evidence that serves this one too: own is that second "no", both
// say no for resource, and for a second look (after > 0) all three were
// asked after its first. The caller holds turn.
func (s *servedResources) checkedLocked(gv schema.GroupVersion, resource string, own servedAnswer, after uint64) bool {
	c, ok := s.groups.checked[gv]
	return ok && c.again.seq == own.seq && !c.first.lists(resource) && c.first.seq > after &&
		time.Since(s.groups.at) <= servedAnswerAge
}

// gvLocked returns discovery's answer for gv, and whether it asked the
// server for it, which it does when the answer it has is older than
// servedAnswerAge or than notBefore. An answer whose request ended with
// the caller's context is the context's error, and is not kept: it says
// nothing about the server. The caller holds turn.
func (s *servedResources) gvLocked(ctx context.Context, gv schema.GroupVersion, notBefore uint64) (a servedAnswer, fresh bool, err error) {
	a, ok := s.answers[gv]
	if ok && time.Since(a.at) <= servedAnswerAge && a.seq >= notBefore {
		return a, false, a.failed()
	}
	a = s.ask(ctx, gv)
	if err := ctx.Err(); err != nil {
		return servedAnswer{}, true, err
	}
	s.answers[gv] = a
	return a, true, a.failed()
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
// preferred first (none when it lists no such group), and the request
// that asked. It asks again when its answer is older than
// servedAnswerAge or than notBefore; an answer whose request ended with
// the caller's context is the context's error, and is not kept. The
// caller holds turn.
func (s *servedResources) versionsLocked(ctx context.Context, group string, notBefore uint64) (versions []string, seq uint64, err error) {
	if s.groups.versions != nil && time.Since(s.groups.at) <= servedAnswerAge && s.groups.seq >= notBefore {
		return s.groups.versions[group], s.groups.seq, s.groups.err
	}
	s.asked++
	a := groupsAnswer{at: time.Now(), seq: s.asked, versions: map[string][]string{}, checked: map[schema.GroupVersion]checkedVersion{}}
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
	if err := ctx.Err(); err != nil {
		return nil, 0, err // says nothing about the server: not kept
	}
	s.groups = a
	return a.versions[group], a.seq, a.err
}
