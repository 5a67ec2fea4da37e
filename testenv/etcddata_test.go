package testenv_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/testenv"
)

func TestAControlPlaneStartedOnSavedEtcdDataHoldsWhatWasSavedAndNotLaterWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first := testenv.Private(t, testenv.Options{})
	ns := first.Namespace(t)
	client := coreClient(t, first.Config())
	createConfigMap(ctx, t, client, ns, "saved")

	saved := filepath.Join(t.TempDir(), "etcd-data")
	require.NoError(t, first.SaveEtcdData(ctx, saved))
	createConfigMap(ctx, t, client, ns, "after-the-save") // the first control plane runs on
	assert.Error(t, first.SaveEtcdData(ctx, saved), "an existing copy is never overwritten")

	second := testenv.Private(t, testenv.Options{EtcdDataFrom: saved})
	var list corev1.ConfigMapList
	require.NoError(t, coreClient(t, second.Config()).Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(&list))
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	assert.Contains(t, names, "saved")
	assert.NotContains(t, names, "after-the-save")
}
