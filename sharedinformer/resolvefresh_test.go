package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// (Real time, not synctest, for every test with a failing discovery
// request: client-go logs it through utilruntime.HandleError, whose
// backoff sleeps holding the memory cache's mutex, which a bubble does
// not count as durably blocked: the bubble would hang.)
//
// zooFaultServer serves octopodes (kind) of zooGV, with discovery of
// zooGV answering 503 while failing is set.
func zooFaultServer(t *testing.T, kind string, failing *atomic.Bool) (*fakeapiserver.Server, *sharedinformer.Factory) {
	return zooFaultServerErrs(t, kind, failing, func(error) {})
}

func zooFaultServerErrs(t *testing.T, kind string, failing *atomic.Bool, onError func(error)) (*fakeapiserver.Server, *sharedinformer.Factory) {
	t.Helper()
	srv := fakeapiserver.New()
	gvPath := "/apis/" + zooGV.String()
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if failing.Load() && r.URL.Path == gvPath {
			return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: kind, Plural: "octopodes"}))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: onError})
	require.NoError(t, err)
	return srv, f
}

// With discovery whole, ForResource(octopodes) for a type of another
// kind is refused: the tests below fail for their faults, not for this.
func TestAForResourceOfAnotherKindIsRefused(t *testing.T) {
	var failing atomic.Bool
	_, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
	require.ErrorContains(t, err, "holds")
}

// InformerFor's doc: "the ForResource resource holds T's kind" is
// checked. (Found by a review, as every test below but the first.) One 503 from one group's discovery, long over, left the
// factory's RESTMapper without that group (client-go builds it from a
// partial discovery and keeps it), and checkResource takes "the mapper
// does not know it" as "not installed yet: pass".
func TestAForResourceKindCheckIsNotSkippedAfterAPastPartialDiscovery(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	_, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery; zoo's answers 503
	require.NoError(t, err)
	failing.Store(false)
	// discovery is whole from here on (the mapper keeps what it read: no clock needed)

	inf, err := sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
	require.ErrorContains(t, err, "but resource octopodes.zoo.listwatch.dev holds Octopus.zoo.listwatch.dev", "octopodes holds kind Octopus, served and listed by discovery in full now; got the informer %v", informerName(inf))
}

// The same, with the fault still on: the check could not ask, and the
// doc says "a check that could not ask would pass unchecked" is not
// handed out.
func TestAForResourceKindCheckDoesNotPassWhileItsGroupsDiscoveryFails(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	_, f := zooFaultServer(t, "Octopus", &failing)
	inf, err := sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
	require.ErrorContains(t, err, "discovery could not be asked, so the kind it holds was not checked", "discovery of zoo failed: the kind was not checked; got the informer %v", informerName(inf))
}

// A misspelt ForResource (the singular) is refused when discovery is
// whole; after a past partial discovery it is handed out.
func TestAMisspeltForResourceIsRefusedAfterAPastPartialDiscovery(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	_, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)
	failing.Store(false)

	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopus")))
	require.ErrorContains(t, err, "did you mean", "octopus is not the resource's name; discovery says octopodes")
}

// A type-derived lookup while its group's discovery fails says the CRD
// is not installed; it is, and the error should say discovery failed.
func TestAKindLookupDuringAFailedGroupDiscoveryNamesTheFailure(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	_, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*Octopus](t.Context(), f)
	require.ErrorContains(t, err, "discovery of zoo.listwatch.dev/v1 could not be asked")
	require.False(t, strings.Contains(err.Error(), "is its CRD installed?"),
		"the CRD is installed; discovery of its group answered 503, and the error does not say so: %v", err)
}

// A CRD deleted and created again under the same plural with another
// kind: the mapper's memory says octopodes hold Octopus, and nothing
// asks again on a "yes".
func TestAForResourceKindCheckSeesACRDRecreatedWithAnotherKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		octopodes := zooGV.WithResource("octopodes")
		srv, f := octopodesServer(t, "Octopus")
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery: octopodes hold Octopus
		require.NoError(t, err)

		recreateOctopodes(t, srv, "Octopuss")

		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(octopodes))
		require.ErrorContains(t, err, "holds Octopuss.zoo.listwatch.dev", "octopodes has held Octopuss for a minute; got the informer %v", informerName(inf))
	})
}

// The same by the type alone: the mapper maps Octopus to octopodes,
// which discovery still lists, holding another kind.
func TestAKindLookupSeesACRDRecreatedWithAnotherKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, f := octopodesServer(t, "Octopus")
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
		require.NoError(t, err)

		recreateOctopodes(t, srv, "Octopuss")

		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f)
		require.ErrorContains(t, err, "serves no resource of kind Octopus", "no resource of kind Octopus has been served for a minute; got the informer %v", informerName(inf))
	})
}

// Clam is a second kind of zooGV, with its list type.
type Clam struct{ Octopus }

func (c *Clam) DeepCopyObject() runtime.Object { return &Clam{*c.Octopus.DeepCopyObject().(*Octopus)} }

type ClamList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Clam `json:"items"`
}

func (l *ClamList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]Clam, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Clam)
	}
	return &c
}

// zooScheme knows core/v1, Octopus and Clam.
var zooScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	s.AddKnownTypes(zooGV, &Octopus{}, &OctopusList{}, &Clam{}, &ClamList{})
	metav1.AddToGroupVersion(s, zooGV)
	return s
}()

// An InformerFor whose ctx ends while the mapper reads discovery gets
// its ctx's error, as promised; but the mapper keeps what it read before
// the cut (client-go builds it from a partial discovery without error),
// and a later InformerFor, with a live ctx and a healthy server, has its
// ForResource kind check skipped.
func TestAContextEndingMidLookupDoesNotSkipALaterForResourceKindCheck(t *testing.T) {
	// Real time: the mapper's fetch waits on mutexes, which a synctest
	// bubble does not count as durably blocked. Nothing races a clock:
	// the zoo group's request waits until the client has read and closed
	// the core group's answer, then the caller gives up.
	srv := fakeapiserver.New()
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	ctx, cancel := context.WithCancel(t.Context())
	coreRead := make(chan struct{})
	coreOnce := sync.OnceFunc(func() { close(coreRead) })
	var armed atomic.Bool
	armed.Store(true)
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if r.URL.Path == "/apis/"+zooGV.String() && armed.Load() {
			<-coreRead
			cancel() // the caller gives up while this request is in flight
			return fakeapiserver.Fault{Hang: true}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	cfg := mem.Config()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Path == "/api/v1" {
				resp.Body = closeHook{resp.Body, coreOnce}
			}
			return resp, err
		})
	})
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)

	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f)
	require.ErrorIs(t, err, context.Canceled)
	armed.Store(false) // discovery is whole from here on

	inf, err := sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
	require.ErrorContains(t, err, "holds Octopus.zoo.listwatch.dev", "octopodes holds Octopus, and discovery answers in full; got the informer %v", informerName(inf))
}

type closeHook struct {
	io.ReadCloser
	hook func()
}

func (c closeHook) Close() error { err := c.ReadCloser.Close(); c.hook(); return err }

func informerName[T interface{ Name() string }](inf T) string {
	defer func() { _ = recover() }()
	return inf.Name()
}

// InformerFor's doc: "a namespace is given only for a namespaced
// resource (a *ScopeError otherwise, for every T)", and "a check that
// could not ask would pass unchecked" is not handed out. With its
// group's discovery failing, a cluster-scoped resource in a namespace
// passes: discovery "cannot tell", the mapper (built from the same
// partial discovery) does not know it, and "" passes.
func TestANamespaceForAClusterScopedResourceIsRefusedWhileItsGroupsDiscoveryFails(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	srv, f := zooFaultServer(t, "Octopus", &failing)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams", ClusterScoped: true}))
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooGV.WithResource("clams")), sharedinformer.InNamespace("default"))
	require.ErrorContains(t, err, "discovery could not be asked, so its scope was not checked", "clams is cluster-scoped, and InformerFor could not ask; got the informer %v", informerName(inf))
}

// recreateOctopodes deletes the octopodes' CRD and creates it again
// holding kind, then lets a minute pass: any answer kept from before is
// old by then.
func recreateOctopodes(t *testing.T, srv *fakeapiserver.Server, kind string) {
	t.Helper()
	_, err := srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: kind, Plural: "octopodes"}))
	time.Sleep(time.Minute)
}
