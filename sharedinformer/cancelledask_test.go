package sharedinformer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/sharedinformer"
)

// A review proved it: InformerFor's checks ask discovery within its ctx,
// and each takes a failed request for "cannot tell", so with a ctx that
// had ended every check passed unasked, and an informer of a kind whose
// CRD was deleted a minute before (the RESTMapper still mapped it) was
// handed out, to get 404 for ever. A ctx that ends before the checks
// have asked is InformerFor's error.
func TestAnInformerForWhoseContextEndedHandsOutNothingUnchecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, f := octopodesServer(t, "Octopus")
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery: octopodes served
		require.NoError(t, err)

		_, err = srv.RemoveCRD(schema.GroupResource{Group: zooGV.Group, Resource: "octopodes"})
		require.NoError(t, err)
		time.Sleep(time.Minute)

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		inf, err := sharedinformer.InformerFor[*Octopus](ctx, f)
		require.ErrorIs(t, err, context.Canceled, "the CRD was deleted a minute ago; with its ctx ended, InformerFor asked nothing and handed out %v", inf)
	})
}
