package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestControllerConvergesAndShutsDownCleanly(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var out bytes.Buffer
	err := run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns,
		"--parents", "2", "--replicas", "3", "--workers", "3"}, &out)
	got := out.String()
	t.Log(got)
	require.NoError(t, err)

	// What the server holds, not what the controller says.
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	for parent, want := range map[string]int{"parent-0": 1, "parent-1": 3} {
		var list corev1.ConfigMapList
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{LabelSelector: "role=child,parent=" + parent}, metav1.ParameterCodec).
			Do(ctx).Into(&list))
		assert.Len(t, list.Items, want, "children of %s on the server", parent)
		for _, child := range list.Items {
			wantValue := map[string]string{"parent-0": "v2", "parent-1": "v1"}[parent]
			assert.Equal(t, wantValue, child.Data["value"], child.Name)
		}
	}

	assert.Contains(t, got, "Waiting for the cache to sync before starting 3 workers.")
	assert.Regexp(t, `parent-0\s+want 3 children, the cache holds 0: creating 3`, got)
	assert.Regexp(t, `parent-0\s+want 5 children, the cache holds 3: creating 2`, got)
	assert.Regexp(t, `parent-1\s+want 3 children, the cache holds 2: creating 1`, got)
	assert.Regexp(t, `parent-0\s+want 1 child, the cache holds 5: deleting 4`, got)
	assert.Regexp(t, `parent-0\s+child parent-0-\w+ has value "v1", want "v2": updating`, got)
	assert.Contains(t, got, "Every step converged.")
	assert.Contains(t, got, "Stopped: queue drained, workers and informer returned.")
}
