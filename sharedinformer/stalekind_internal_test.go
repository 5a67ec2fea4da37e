package sharedinformer

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
)

type squid struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (s *squid) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type squidList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []squid `json:"items"`
}

func (l *squidList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = append([]squid(nil), l.Items...)
	return &c
}

// A served check has found squids holding Clam (the CRD was created
// again with another kind) and marked the mapper stale about zoo. While
// zoo's discovery then fails, a ForResource of squids for *Squid must
// not be judged by the mapper's memory from before the CRD was made
// again: the mark resets it, and InformerFor says discovery could not be
// asked. (Found by a review of dff301f, which had the mapper kept as it
// was whenever the group's discovery failed.)
func TestAForResourceKindCheckIsNotPassedByAMapperAServedCheckFoundStaleWhileDiscoveryFails(t *testing.T) {
	f, failing := squidsFoundHoldingClam(t)
	failing.Store(true)
	inf, err := InformerFor[*squid](t.Context(), f, ForResource(zooGroupVersion.WithResource("squids")))
	require.ErrorContains(t, err, "could not be asked", "a served check found squids holding Clam; zoo's discovery then failed; got the informer %v", inf)
}

// The same when a lookup in another group spends zoo's mark: a served
// check's "no" in the core group marks it too, and the next core lookup
// resets the mapper for every mark. That reset keeps what the mapper
// knew of groups whose discovery fails (keepingMapper), but not of a
// marked one: the *Squid of squids is not passed by that memory either.
func TestAStaleMarkSpentByAnotherGroupsLookupStillDropsItsGroupWhileItsDiscoveryFails(t *testing.T) {
	f, failing := squidsFoundHoldingClam(t)
	answer, err := f.served.For(corev1.SchemeGroupVersion.WithResource("widgetz"), "")(t.Context())
	require.NoError(t, err)
	require.False(t, answer.Served) // the core group is marked too

	failing.Store(true)
	_, err = InformerFor[*corev1.ConfigMap](t.Context(), f) // a core lookup: the reset takes every mark
	require.NoError(t, err)
	inf, err := InformerFor[*squid](t.Context(), f, ForResource(zooGroupVersion.WithResource("squids")))
	require.ErrorContains(t, err, "could not be asked", "a served check found squids holding Clam; its mark was spent by a core lookup while zoo's discovery failed; got the informer %v", inf)
}

// squidsFoundHoldingClam returns a factory whose mapper read squids
// holding Squid, after which the CRD was created again holding Clam and
// a served check found it so, marking zoo stale; failing makes zoo's
// discovery answer 503. (The sleep only ages the check's answer past
// sharing; a longer one changes nothing.)
func squidsFoundHoldingClam(t *testing.T) (*Factory, *atomic.Bool) {
	t.Helper()
	squids := zooGroupVersion.WithResource("squids")
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	scheme.AddKnownTypeWithName(zooGroupVersion.WithKind("Squid"), &squid{})
	scheme.AddKnownTypeWithName(zooGroupVersion.WithKind("SquidList"), &squidList{})
	metav1.AddToGroupVersion(scheme, zooGroupVersion)
	srv, f, failing := zooFailingFactory(t, scheme, fakeapiserver.CRD{Kind: "Squid", Plural: "squids"})
	_, err := InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full: squids hold Squid
	require.NoError(t, err)

	_, err = srv.RemoveCRD(squids.GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGroupVersion.Group, Version: zooGroupVersion.Version, Kind: "Clam", Plural: "squids"}))
	// The running informer of *Squid's served check: squids hold Clam.
	answer, err := f.served.ForKind(squids, "", "Squid")(t.Context())
	require.NoError(t, err)
	require.Equal(t, "Clam", answer.OtherKind)

	time.Sleep(servedAnswerAge + 100*time.Millisecond) // the check's answer is no longer shared
	return f, failing
}
