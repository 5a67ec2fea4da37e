package sharedinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// holdTurn starts an InformerFor whose mapper rebuild hangs on /apis,
// holding the lookup turn until the returned release; holding reports
// whether that InformerFor is still waiting.
func holdTurn(t *testing.T, f *sharedinformer.Factory, z *zooFaults) (release func(), holding func() bool) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	z.hangList.Store(true)
	go func() {
		defer close(done)
		_, _ = sharedinformer.InformerFor[*corev1.PodTemplate](ctx, f) // NoMatch: forget, rebuild: /apis hangs
	}()
	<-z.listHung
	release = func() { z.hangList.Store(false); cancel(); <-done }
	holding = func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	return release, holding
}

// The ScopeError discovery gave (octopodes made again cluster-scoped;
// the mapper remembers them namespaced) is given while another
// InformerFor holds the lookup turn: the group is marked all the same,
// so when zoo's discovery then fails, the mapper's carried-over
// "namespaced" does not hand out the informer. (Found by review: the
// mark waited for the turn, and a caller whose ctx ended first marked
// nothing.)
func TestAScopeErrorGivenWhileTheTurnIsBusyIsNotForgotten(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooScheme)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads: octopodes namespaced
	require.NoError(t, err)
	_, err = z.srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, z.srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes", ClusterScoped: true}))

	release, _ := holdTurn(t, f, z)
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr, "control: discovery says cluster-scoped")
	release()

	time.Sleep(1100 * time.Millisecond)
	z.zooFails.Store(true)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	require.Error(t, err, "discovery said octopodes are cluster-scoped a second ago; got the informer %v", informerName(inf))
}

// A refusal discovery has already given (Namespaces in a namespace)
// does not wait for the lookup turn, which another InformerFor holds
// while its discovery hangs. (Found by review: it waited for the turn,
// and returned only when its own ctx ended.)
func TestARefusalDiscoveryGaveDoesNotWaitForAnotherLookupsHang(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooScheme)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)
	release, holding := holdTurn(t, f, z)
	defer release()
	_, err = sharedinformer.InformerFor[*corev1.Namespace](t.Context(), f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("namespaces")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr)
	require.True(t, holding(), "a ScopeError discovery gave waited for another InformerFor's hanging discovery to give up the lookup turn")
}

// On a fresh factory, a caller's mistake (Namespaces in a namespace)
// reads the whole of discovery (/apis and every group version) to build
// the mapper, only to find it agrees (found by review: it built the
// mapper; /api/v1 is enough).
func TestAMistakeOnAFreshFactoryDoesNotReadAllOfDiscovery(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooScheme)
	_, err := sharedinformer.InformerFor[*corev1.Namespace](t.Context(), f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("namespaces")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr)
	got := z.asked()
	require.NotContains(t, got, "/apis", "a refusal discovery gave read the group list: %v", got)
}
