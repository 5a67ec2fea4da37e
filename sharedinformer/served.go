package sharedinformer

import (
	"context"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/listwatch/informer/reflector"
)

// servedAnswerAge is how long one answer of discovery serves every
// informer of the factory that asks about the same group and version, or
// one look at a whole group (groupLook) every informer of a resource of
// that group, whether it answered or failed (and a check that waited
// for its turn takes any asked while it waited, however old: see
// wanted). It bounds the rate of discovery requests, however many
// informers ask: per group version,
// about one request a second for the informers' own checks; per group
// whose resources some informer found not served, about one look a
// second (a list of groups and a request for each version of the group,
// on top of those), or one per reflector BackoffInitial while informers
// of a deleted resource take their second looks, which want a look newer
// than their first (see served).
const servedAnswerAge = time.Second

// servedForgetAge is how long an answer or a look is kept at all: past
// servedAnswerAge only a check that has waited for its turn since before
// it was asked takes it, and one that waited longer asks again. Answers
// past it are forgotten by the next check or InformerFor that comes
// servedAnswerAge or more after the last such pass (no timer runs for
// it), so memory follows the groups asked about in the minute before
// the factory last asked discovery, not every group a long-lived factory
// ever asked about (CRDs that come and go).
const servedForgetAge = time.Minute

// servedResources answers the reflector's Options.Served for every
// informer of a factory: does the server still serve this resource, in
// this version or another? It asks discovery, never a cache older than
// servedAnswerAge, so a 404 is judged by what the server says now. An
// answer that a resource is not served in its version also marks the
// factory's RESTMapper stale, so that it forgets the resource too.
type servedResources struct {
	client discovery.DiscoveryInterfaceWithContext
	// markStale tells the factory that its RESTMapper may hold a
	// resource no longer served: the factory resets it before its next
	// lookup, on that caller's goroutine. Not here: a reset waits for any
	// discovery fetch the mapper has in flight, which no context of a
	// check reaches, and a check holds every other check's turn.
	markStale func(group string)

	// turn is held by the one check asking at a time (the answers are
	// shared); a check waiting for it gives up when its context ends, so
	// a request that hangs holds up no informer being stopped.
	turn    chan struct{}
	answers map[schema.GroupVersion]servedAnswer // guarded by turn
	looks   map[string]groupLook                 // guarded by turn; by group
	// pruned is when answers and looks older than servedForgetAge were
	// last forgotten. Guarded by turn.
	pruned time.Time
	// asked counts the requests made, in order: an answer's seq orders
	// it among the others where times cannot (every request of one
	// instant shares its time in a synctest bubble). Written under turn;
	// read before taking it, by a check that notes where it began to wait.
	asked atomic.Uint64
}

// servedAnswer is one discovery answer for a group and version: the
// resources it lists, each with whether it is namespaced, or the error
// asking gave (a 404: nothing is served in that group and version).
type servedAnswer struct {
	at        time.Time
	seq       uint64                    // the order it was asked in
	resources map[string]listedResource // by name
	err       error
}

// listedResource is what discovery says of one resource it lists.
type listedResource struct {
	kind       string
	namespaced bool
}

// serves reports whether the answer lists resource as reader can read
// it: any resource across the whole cluster, only a namespaced one in
// one namespace, and of reader's kind if it has one.
func (a servedAnswer) serves(resource string, reader servedReader) bool {
	r, ok := a.resources[resource]
	return ok && (r.namespaced || !reader.inNamespace) && (reader.kind == "" || r.kind == reader.kind)
}

// failed is the answer's error, but nil for a 404: nothing is served in
// that group and version, a "no" for every resource (the last CRD of a
// group version takes it with it).
func (a servedAnswer) failed() error {
	if apierrors.IsNotFound(a.err) {
		return nil
	}
	return a.err
}

// groupLook is one look at a whole group, asked in one go: the list of
// groups, then each version it names for the group, one request after
// the other. Only a look says where a resource is served once its own
// version said "no". Discovery is not atomic, and answers asked apart
// can each be true at their moment and still say "nowhere" together for
// a resource that moved between them; a look asked in one go leaves the
// least room for that, so its answers are never mixed with answers asked
// apart, by other looks or at other times.
type groupLook struct {
	at        time.Time
	seq       uint64   // the order its list of groups was asked in
	versions  []string // the group's versions, preferred first; none when the list does not name it
	resources map[string]servedAnswer
	// err is why the look failed (a request's error other than a 404):
	// it says "cannot tell", never "gone". A failed look is shared as an
	// answer is, or while discovery fails every informer's check would
	// ask a look of its own.
	err error
}

func newServedResources(client discovery.DiscoveryInterfaceWithContext, markStale func(group string)) *servedResources {
	return &servedResources{
		client: client, markStale: markStale, turn: make(chan struct{}, 1),
		answers: map[schema.GroupVersion]servedAnswer{}, looks: map[string]groupLook{},
	}
}

// For returns the Served function of one informer of gvr, in namespace
// ("" for the whole cluster), whatever kind it holds (an unstructured or
// metadata-only informer). It remembers that informer's last "gone"
// (see served).
func (s *servedResources) For(gvr schema.GroupVersionResource, namespace string) func(context.Context) (reflector.Serving, error) {
	return s.ForKind(gvr, namespace, "")
}

// ForKind is For for an informer of one kind (a typed informer's): gvr
// listed holding another kind is not served to it. Its CRD was deleted,
// its objects with it, and created again under the same plural; the
// informer's LISTs fail to decode the new kind, never with a 404.
func (s *servedResources) ForKind(gvr schema.GroupVersionResource, namespace, kind string) func(context.Context) (reflector.Serving, error) {
	// goneAt is the request that began the look behind this informer's
	// last "gone". Guarded by s.turn.
	var goneAt uint64
	reader := servedReader{inNamespace: namespace != "", kind: kind}
	return func(ctx context.Context) (reflector.Serving, error) { return s.served(ctx, gvr, reader, &goneAt) }
}

// servedReader is what a served check needs to know of its informer,
// besides the resource: whether it reads one namespace (a cluster-scoped
// resource has none), and the kind it decodes ("" for any).
type servedReader struct {
	inNamespace bool
	kind        string
}

// wanted says which stored answers and looks a check may take instead of
// asking: those asked after the after'th request, and either no older
// than servedAnswerAge or asked after the waited'th, the last request
// made before the check began to wait for its turn. An answer asked
// while a check waited is as fresh as one it would ask itself, however
// long the wait: when discovery is slow, a look takes longer than
// servedAnswerAge, and the checks queued behind it must share it, not
// each ask its own, one after the other.
type wanted struct {
	after, waited uint64
}

// takes reports whether a check may take what was asked at at, as
// request seq.
func (w wanted) takes(at time.Time, seq uint64) bool {
	return seq > w.after && (seq > w.waited || time.Since(at) <= servedAnswerAge)
}

// served reports whether discovery lists gvr, in a scope the informer
// reads (inNamespace: one namespace, which a cluster-scoped resource has
// none of), and, if not, in which other versions of its group it lists
// gvr's resource: a CRD that moved to another version deleted none of
// its objects by moving. Any failure to ask other than a 404 is an
// error, which the reflector takes as "it may be served".
//
// "Gone" is the answer that deletes, and the reflector believes it only
// when it looks again BackoffInitial later (reflector.SecondLook) and is
// told so again. That second look must not reuse the evidence behind the
// first, or it would only repeat it: it is judged by a look at the group
// asked after the one behind this informer's last "gone" (*goneAt), by
// it or by any other informer meanwhile. Every other look takes answers
// up to servedAnswerAge old, or asked while it waited for its turn
// (wanted), shared by all the informers, which bounds the rate of
// discovery requests however many informers ask.
func (s *servedResources) served(ctx context.Context, gvr schema.GroupVersionResource, reader servedReader, goneAt *uint64) (answer reflector.Serving, err error) {
	want, err := s.takeTurn(ctx)
	if err != nil {
		return reflector.Serving{}, err // a stopped informer asks nothing
	}
	defer s.giveTurn()
	if reflector.SecondLook(ctx) {
		want.after = *goneAt
	}
	answer, evidence, err := s.judgeLocked(ctx, gvr, reader, want)
	if err == nil && !answer.Served && len(answer.Elsewhere) == 0 {
		*goneAt = evidence
	}
	return answer, err
}

// takeTurn waits for the turn, or for ctx to end, and returns which
// stored answers the caller may take (wanted: those no older than
// servedAnswerAge, or asked while it waited). The caller gives the turn
// back with giveTurn.
func (s *servedResources) takeTurn(ctx context.Context) (wanted, error) {
	if err := ctx.Err(); err != nil {
		return wanted{}, err
	}
	want := wanted{waited: s.asked.Load()}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return wanted{}, ctx.Err()
	}
	s.forgetOldLocked()
	return want, nil
}

func (s *servedResources) giveTurn() { <-s.turn }

// forgetOldLocked drops the answers and looks older than
// servedForgetAge, at most once a servedAnswerAge: each pass reads what
// was asked in the last minute or so. It copies what it keeps into new
// maps, since a Go map never gives back the room of deleted entries. The
// caller holds turn.
func (s *servedResources) forgetOldLocked() {
	if time.Since(s.pruned) < servedAnswerAge {
		return
	}
	s.pruned = time.Now()
	s.answers = keepRecent(s.answers, func(a servedAnswer) time.Time { return a.at })
	s.looks = keepRecent(s.looks, func(l groupLook) time.Time { return l.at })
}

// keepRecent returns m, or a copy of it without the entries asked more
// than servedForgetAge ago if there are any.
func keepRecent[K comparable, V any](m map[K]V, askedAt func(V) time.Time) map[K]V {
	old := 0
	for _, v := range m {
		if time.Since(askedAt(v)) > servedForgetAge {
			old++
		}
	}
	if old == 0 {
		return m
	}
	kept := make(map[K]V, len(m)-old)
	for k, v := range m {
		if time.Since(askedAt(v)) <= servedForgetAge {
			kept[k] = v
		}
	}
	return kept
}

// judgeLocked is served's verdict. A "no" for gvr's version is judged by
// a look at its whole group (groupLook) that want takes, whose number it
// returns as the verdict's evidence. A resource listed cluster-scoped
// is not served to an informer of one namespace: its CRD was deleted,
// with the namespace's objects, and created again cluster-scoped. One
// listed holding another kind is not served to an informer of its old
// kind, likewise. The caller holds turn.
func (s *servedResources) judgeLocked(ctx context.Context, gvr schema.GroupVersionResource, reader servedReader, want wanted) (_ reflector.Serving, evidence uint64, _ error) {
	answer := reflector.Serving{Version: gvr.Version}
	own, err := s.gvLocked(ctx, gvr.GroupVersion(), wanted{waited: want.waited})
	if err != nil || own.serves(gvr.Resource, reader) {
		answer.Served = err == nil
		return answer, 0, err
	}
	s.markStale(gvr.Group)
	// Where the resource is served now, if anywhere, is judged by the
	// look alone, this version included: the "no" may be older than a
	// move back, and answers asked apart are never mixed.
	look, err := s.lookLocked(ctx, gvr.Group, want)
	if err != nil {
		return answer, 0, err
	}
	for _, v := range look.versions {
		listed, ok := look.resources[v].resources[gvr.Resource]
		if !ok {
			continue
		}
		if reader.kind != "" && listed.kind != reader.kind {
			answer.OtherKind = listed.kind // every version of a CRD holds its one kind
			continue
		}
		if !look.resources[v].serves(gvr.Resource, reader) {
			answer.ClusterScoped = true // every version of a CRD has its one scope
			continue
		}
		if v == gvr.Version {
			answer.Served = true
			return answer, look.seq, nil
		}
		answer.Elsewhere = append(answer.Elsewhere, v)
	}
	return answer, look.seq, nil
}

// lookLocked returns a look at group: the stored one if want takes it,
// else a new one. An error of any request (a 404 for a
// version is a "no", no error) fails the look, and the failed look is
// kept as an answer would be; one cut short by the caller's context says
// nothing about the server, and is not kept. The caller holds turn.
func (s *servedResources) lookLocked(ctx context.Context, group string, want wanted) (groupLook, error) {
	if l, ok := s.looks[group]; ok && want.takes(l.at, l.seq) {
		return l, l.err
	}
	l := groupLook{resources: map[string]servedAnswer{}}
	l.at, l.seq, l.versions, l.err = s.versionsLocked(ctx, group)
	for _, v := range l.versions {
		if l.err != nil {
			break
		}
		var a servedAnswer
		a, l.err = s.gvLocked(ctx, schema.GroupVersion{Group: group, Version: v}, wanted{after: l.seq, waited: l.seq})
		l.resources[v] = a
	}
	if err := ctx.Err(); err != nil {
		return groupLook{}, err
	}
	s.looks[group] = l
	return l, l.err
}

// gvLocked returns discovery's answer for gv, asking the server when
// want does not take the answer it has. An answer whose request ended
// with the caller's context is the context's error, and is not kept: it
// says nothing about the server. The caller holds turn.
func (s *servedResources) gvLocked(ctx context.Context, gv schema.GroupVersion, want wanted) (servedAnswer, error) {
	a, ok := s.answers[gv]
	if ok && want.takes(a.at, a.seq) {
		return a, a.failed()
	}
	a = s.ask(ctx, gv)
	if err := ctx.Err(); err != nil {
		return servedAnswer{}, err
	}
	s.answers[gv] = a
	return a, a.failed()
}

// ask asks the server which resources gv holds; the caller need not
// hold the turn (describe does not).
func (s *servedResources) ask(ctx context.Context, gv schema.GroupVersion) servedAnswer {
	a := servedAnswer{at: time.Now(), seq: s.asked.Add(1), resources: map[string]listedResource{}}
	list, err := s.client.ServerResourcesForGroupVersionWithContext(ctx, gv.String())
	if err != nil {
		a.err = err
	} else {
		for _, r := range list.APIResources {
			a.resources[r.Name] = listedResource{kind: r.Kind, namespaced: r.Namespaced}
		}
	}
	return a
}

// versionsLocked asks the list of groups and returns when it asked, the
// request's number, and the versions it lists for group, preferred first
// (none when it lists no such group). An answer whose request ended with
// the caller's context is the context's error. The caller holds turn.
func (s *servedResources) versionsLocked(ctx context.Context, group string) (at time.Time, seq uint64, versions []string, err error) {
	at, seq = time.Now(), s.asked.Add(1)
	list, err := s.client.ServerGroupsWithContext(ctx)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return at, seq, nil, ctxErr // says nothing about the server
	}
	if err != nil {
		return at, seq, nil, err
	}
	for _, g := range list.Groups {
		if g.Name != group {
			continue
		}
		versions = []string{g.PreferredVersion.Version}
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				versions = append(versions, v.Version)
			}
		}
	}
	return at, seq, versions, nil
}
