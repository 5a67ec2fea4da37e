package consumer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/consumer"
	"github.com/listwatch/informer/fakeapiserver"
)

// Only a ConfigMap labelled SourceLabel is a source. One that loses the
// label is no longer mirrored: its mirror goes, as when the source is
// deleted, and a mirror made by hand for it is not kept in line with it
// (nor, once deleted, made again).
func TestAMirrorGoesWhenItsSourceLosesTheLabel(t *testing.T) {
	api, cfg, ctx := onFake(t, fakeapiserver.New())
	source, err := api.create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{consumer.SourceLabel: "yes"}},
		Data:       map[string]string{"color": "blue"},
	})
	require.NoError(t, err)
	runMirror(t, ctx, cfg, api)
	require.Eventually(t, func() bool { _, err := api.get(ctx, "web-mirror"); return err == nil }, 30*time.Second, 10*time.Millisecond)

	delete(source.Labels, consumer.SourceLabel)
	require.NoError(t, api.update(ctx, source))
	require.Eventually(t, func() bool { _, err := api.get(ctx, "web-mirror"); return apierrors.IsNotFound(err) },
		10*time.Second, 10*time.Millisecond, "the mirror outlived its source's label")
}
