package sharedinformer

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// servedAnswerAge is how long one answer of discovery serves every
// informer of the factory that asks about the same group and version. It
// bounds the rate of discovery requests, however many informers of a
// deleted group ask at once.
const servedAnswerAge = time.Second

// servedResources answers the reflector's Options.Served for every
// informer of a factory: does the server still serve this resource? It
// asks discovery for the resource's group and version, never a cache
// older than servedAnswerAge, so a 404 is judged by what the server says
// now. An answer that a resource is gone also clears the factory's cached
// discovery, so that the RESTMapper forgets it too.
type servedResources struct {
	client discovery.DiscoveryInterfaceWithContext
	// forget clears what the factory's RESTMapper cached of discovery.
	forget func()

	mu      sync.Mutex
	answers map[schema.GroupVersion]servedAnswer // guarded by mu
}

// servedAnswer is one discovery answer for a group and version: the
// resources it lists, or the error asking gave (a 404: nothing is served
// in that group and version).
type servedAnswer struct {
	at        time.Time
	resources map[string]bool
	err       error
}

func newServedResources(client discovery.DiscoveryInterfaceWithContext, forget func()) *servedResources {
	return &servedResources{client: client, forget: forget, answers: map[schema.GroupVersion]servedAnswer{}}
}

// For returns the Served function of an informer of gvr.
func (s *servedResources) For(gvr schema.GroupVersionResource) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) { return s.served(ctx, gvr) }
}

// served reports whether discovery lists gvr. A 404 for the group and
// version is a "no" (the last CRD of a group takes its group with it);
// any other failure to ask is an error, which the reflector takes as "it
// may be served".
func (s *servedResources) served(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
	gv := gvr.GroupVersion()
	s.mu.Lock()
	defer s.mu.Unlock() // one request at a time: the answer is shared
	a, ok := s.answers[gv]
	fresh := !ok || time.Since(a.at) > servedAnswerAge
	if fresh {
		a = s.ask(ctx, gv)
		s.answers[gv] = a
	}
	served, err := a.resources[gvr.Resource], a.err
	if apierrors.IsNotFound(err) {
		served, err = false, nil
	}
	if fresh && !served && err == nil {
		s.forget()
	}
	return served, err
}

// ask asks the server which resources gv holds. The caller holds mu.
func (s *servedResources) ask(ctx context.Context, gv schema.GroupVersion) servedAnswer {
	a := servedAnswer{at: time.Now(), resources: map[string]bool{}}
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
