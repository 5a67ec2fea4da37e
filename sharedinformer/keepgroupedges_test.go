package sharedinformer_test

// A keepingMapper carries a group over a reset only for what its
// discovery cannot say now: these are the edges a review proved
// (5c4d826), each found wrong on that commit.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// The list of groups (/apis) answers 503 while a reset for the core
// group's sake (a kind not served) rebuilds the mapper: the build fails
// whole, and zoo, which the mapper knew a moment before and whose own
// discovery answers, is lost until /apis answers again. Passing: the
// InformerFor of Octopus in a namespace passes, as it does before the reset.
func TestAGroupListOutageDuringAResetForAnotherGroupKeepsWhatTheMapperKnew(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooScheme)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full
	require.NoError(t, err)

	z.listFails.Store(true)
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
	require.NoError(t, err, "control: before any reset the mapper answers")

	_, err = sharedinformer.InformerFor[*corev1.PodTemplate](t.Context(), f) // a reset for the core group's sake
	require.Error(t, err)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("ops"))
	require.NoError(t, err, "a reset for the core group's sake lost zoo (its own discovery answers); got %v", informerName(inf))
}

// Discovery says octopodes, created again cluster-scoped, are
// cluster-scoped (a ScopeError, confirmed by a fresh ask, resets
// nothing). A second later zoo's discovery fails, and a reset for the
// core group's sake carries over the mapper's "namespaced" from before
// the CRD was created again: an informer of octopodes in a namespace is
// handed out, whose LIST of /namespaces/shop/octopodes 404s for ever.
// Before 5c4d826 the reset lost zoo and InformerFor said discovery could
// not be asked. Passing: an error. (withReset=false is the same gap
// without the reset: it fails on 5c4d826's parent too.)
func TestAScopeErrorDiscoveryGaveIsNotForgottenByAResetThatCarriesTheGroupOver(t *testing.T) {
	for _, withReset := range []bool{true, false} {
		t.Run(map[bool]string{true: "withReset", false: "noReset"}[withReset], func(t *testing.T) {
			var failing atomic.Bool
			srv, f := zooFaultServer(t, "Octopus", &failing)
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads: octopodes namespaced
			require.NoError(t, err)

			_, err = srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
			require.NoError(t, err)
			require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes", ClusterScoped: true}))
			_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
			var scopeErr *sharedinformer.ScopeError
			require.ErrorAs(t, err, &scopeErr, "control: discovery says cluster-scoped")

			time.Sleep(1100 * time.Millisecond) // describe's answer is no longer shared
			failing.Store(true)
			if withReset {
				_, err = sharedinformer.InformerFor[*corev1.PodTemplate](t.Context(), f) // a reset for the core group's sake
				require.Error(t, err)
			}
			inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
			require.Error(t, err, "withReset=%v: discovery said octopodes are cluster-scoped a second ago; got the informer %v", withReset, informerName(inf))
		})
	}
}

// The same for kinds: octopodes are created again holding Clam, and
// discovery refuses *Octopus over them (a KindError, confirmed by a
// fresh ask, resets nothing). During zoo's outage, after a reset for
// the core group's sake, ForResource(octopodes) for *Octopus passes on
// the carried memory. Passing: an error.
func TestAKindErrorDiscoveryGaveIsNotForgottenByAResetThatCarriesTheGroupOver(t *testing.T) {
	for _, withReset := range []bool{true, false} {
		t.Run(map[bool]string{true: "withReset", false: "noReset"}[withReset], func(t *testing.T) {
			var failing atomic.Bool
			srv, f := zooFaultServer(t, "Octopus", &failing)
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
			require.NoError(t, err)

			_, err = srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
			require.NoError(t, err)
			require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "octopodes"}))
			octopodes := sharedinformer.ForResource(zooGV.WithResource("octopodes"))
			_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes)
			var kindErr *sharedinformer.KindError
			require.ErrorAs(t, err, &kindErr, "control: discovery says octopodes hold Clam")

			time.Sleep(1100 * time.Millisecond)
			failing.Store(true)
			if withReset {
				_, err = sharedinformer.InformerFor[*corev1.PodTemplate](t.Context(), f)
				require.Error(t, err)
			}
			inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes)
			require.Error(t, err, "withReset=%v: discovery said octopodes hold Clam a second ago; got the informer %v", withReset, informerName(inf))
		})
	}
}

// During zoo's outage a kind lookup the mapper cannot answer (*Clam,
// no CRD holds it: a mistake, or a CRD not installed yet) resets the
// mapper doubting zoo, though a NoMatch contradicts nothing the mapper
// knew, and a rebuild from zoo's failing discovery can learn nothing of
// zoo/v1: what it knew of Octopus is dropped, and the right lookup
// (*Octopus) now says discovery could not be asked. The same shape as
// TestARefusedForResourceDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup,
// by the kind path. Passing: *Octopus passes after the mistake as before it.
func TestAKindNotServedDuringItsGroupsOutageKeepsWhatTheMapperKnewOfTheGroup(t *testing.T) {
	var failing atomic.Bool
	_, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)

	failing.Store(true)
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
	require.NoError(t, err, "control: the mapper knew Octopus")
	_, err = sharedinformer.InformerFor[*Clam](t.Context(), f)
	require.ErrorContains(t, err, "could not be asked")
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("ops"))
	require.NoError(t, err, "a NoMatch for Clam during zoo's outage dropped what the mapper knew of Octopus; got %v", informerName(inf))
}
