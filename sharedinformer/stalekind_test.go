package sharedinformer_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// Likewise a *KindError: octopodes' CRD was deleted and created again
// holding Clam (nothing watches it), then zoo's discovery answers 503.
// InformerFor[*Clam] over octopodes, the right type now, is told
// discovery could not be asked, not refused by the mapper's memory that
// octopodes hold Octopus (which a caller, or the simulator's keeper,
// would keep as the server's answer).
func TestAKindErrorDuringAnOutageIsNotTheMappersMemoryOfADeletedCRD(t *testing.T) {
	var failing atomic.Bool
	srv, f := zooFaultServer(t, "Octopus", &failing)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full: octopodes hold Octopus
	require.NoError(t, err)

	_, err = srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "octopodes"}))
	failing.Store(true) // zoo's discovery answers 503 from here on

	inf, err := sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
	kindErr, isKindErr := errors.AsType[*sharedinformer.KindError](err)
	require.False(t, isKindErr, "octopodes hold Clam on the server; InformerFor[*Clam] was refused with a *KindError naming %v (the mapper's memory of the deleted CRD): %v; informer %v", kindErrHolds(kindErr), err, informerName(inf))
}

func kindErrHolds(e *sharedinformer.KindError) any {
	if e == nil {
		return nil
	}
	return e.Holds
}
