package sharedinformer_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A fresh factory's first build of the mapper has
// read zoo's discovery (octopodes: Octopus, namespaced) and waits on
// /api/v1. Meanwhile octopodes are made again cluster-scoped, and an
// InformerFor in a namespace gets the ScopeError from discovery: the
// mapper cannot tell yet what it will remember (the build has not
// stored it), so the group is marked: when zoo's discovery fails after
// the build stored the old "namespaced", the informer is refused.
// (Found by review: no mark, and the old memory handed it out.)
func TestAScopeErrorDuringABuildInFlightIsNotForgotten(t *testing.T) {
	z := newZooFaults(t)
	zooPath := "/apis/" + zooGV.String()
	zooRead := make(chan struct{}, 1)
	cfg := rest.CopyConfig(z.cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Path == zooPath && z.holdCore.Load() {
				body, _ := io.ReadAll(resp.Body) // what the build reads is fixed now
				resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(body))
				tell(zooRead)
			}
			return resp, err
		})
	}
	f := zooFactory(t, cfg, zooScheme)

	z.holdCore.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // builds the mapper
		done <- err
	}()
	<-z.coreHeld
	<-zooRead // the build has read octopodes: Octopus, namespaced
	z.holdCore.Store(false)

	_, err := z.srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, z.srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes", ClusterScoped: true}))
	octopodes := sharedinformer.ForResource(zooGV.WithResource("octopodes"))
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes, sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr, "control: discovery says cluster-scoped")

	close(z.release)
	require.NoError(t, <-done)

	time.Sleep(1100 * time.Millisecond) // describe's answer is no longer shared
	z.zooFails.Store(true)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes, sharedinformer.InNamespace("shop"))
	require.Error(t, err, "discovery said octopodes are cluster-scoped a second ago; got the informer %v", informerName(inf))
}

var zooV2 = schema.GroupVersion{Group: zooGV.Group, Version: "v2"}

// zooV12Scheme knows core/v1, and Octopus in zoo v1 and v2.
var zooV12Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	s.AddKnownTypes(zooGV, &Octopus{}, &OctopusList{})
	s.AddKnownTypes(zooV2, &Octopus{}, &OctopusList{})
	metav1.AddToGroupVersion(s, zooGV)
	metav1.AddToGroupVersion(s, zooV2)
	return s
}()

// The mapper remembers octopodes in zoo/v1,
// namespaced; the CRD is made again in v2, cluster-scoped (a CRD has one
// scope, whatever the version). The ScopeError discovery gives for
// zoo/v2/octopodes is checked against every version the mapper knows:
// it remembers v1 namespaced, so the group is marked, and during zoo's
// outage no informer of octopodes in a namespace is handed out. (Found
// by review: only v2 was checked.)
func TestAScopeErrorInAnotherVersionThanTheMapperKnowsIsNotForgotten(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooV12Scheme)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads: zoo/v1 octopodes namespaced
	require.NoError(t, err)

	_, err = z.srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, z.srv.InstallCRD(fakeapiserver.CRD{Group: zooV2.Group, Version: zooV2.Version, Kind: "Octopus", Plural: "octopodes", ClusterScoped: true}))
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooV2.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr, "control: discovery says zoo/v2 octopodes are cluster-scoped")

	time.Sleep(1100 * time.Millisecond)
	z.zooFails.Store(true)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	require.Error(t, err, "discovery said octopodes are cluster-scoped a second ago; got the informer %v", informerName(inf))
}
