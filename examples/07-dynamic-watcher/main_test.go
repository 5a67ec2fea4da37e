package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// Three CRDs are installed, each with two objects; one moves from
// v1alpha1 to v1; then all three are deleted. The watcher's output shows
// an informer started for each, what each cached, the version change as
// a release and a start, and a release for each deletion.
func TestTheWatcherFollowsCRDsInstalledChangedAndDeleted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &output{}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, []string{"--kubeconfig", cp.KubeconfigPath()}, out) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	out.waitFor(t, "watching CustomResourceDefinitions: ")

	crds := []testenv.CRD{
		{Group: "a.watcher.listwatch.dev", Version: "v1", Kind: "Apple", Plural: "apples"},
		{Group: "b.watcher.listwatch.dev", Version: "v1alpha1", Kind: "Berry", Plural: "berries"},
		{Group: "c.watcher.listwatch.dev", Version: "v1", Kind: "Cherry", Plural: "cherries", ClusterScoped: true},
	}
	client, err := dynamic.NewForConfig(cp.Config())
	require.NoError(t, err)
	for _, crd := range crds {
		require.NoError(t, cp.InstallCRD(ctx, crd))
		resource := crd.Plural + "." + crd.Group + "/" + crd.Version
		out.waitFor(t, "+ "+resource+": informer started (metadata only)")
		for i := 1; i <= 2; i++ {
			name := fmt.Sprintf("%s-%d", strings.ToLower(crd.Kind), i)
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": crd.Group + "/" + crd.Version, "kind": crd.Kind, "metadata": map[string]any{"name": name},
			}}
			gvr := client.Resource(schema.GroupVersionResource{Group: crd.Group, Version: crd.Version, Resource: crd.Plural})
			if crd.ClusterScoped {
				_, err = gvr.Create(ctx, obj, metav1.CreateOptions{})
			} else {
				_, err = gvr.Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
				name = ns + "/" + name
			}
			require.NoError(t, err)
			out.waitFor(t, "  "+resource+": cached "+name)
		}
	}

	// berries move to v1: v1alpha1 is no longer served, v1 is stored.
	berries := crds[1]
	version := func(name string, current bool) map[string]any {
		return map[string]any{"name": name, "served": current, "storage": current,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	}
	patch := fmt.Appendf(nil, `{"spec":{"versions":[%s,%s]}}`, mustJSON(t, version("v1alpha1", false)), mustJSON(t, version("v1", true)))
	_, err = client.Resource(crdsResource).Patch(ctx, berries.Plural+"."+berries.Group, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	out.waitFor(t, "- berries.b.watcher.listwatch.dev/v1alpha1: released (now served as v1)")
	out.waitFor(t, "+ berries.b.watcher.listwatch.dev/v1: informer started (metadata only)")
	out.waitFor(t, "  berries.b.watcher.listwatch.dev/v1: cached "+ns+"/berry-1")

	crds[1].Version = "v1"
	for _, crd := range crds {
		require.NoError(t, cp.DeleteCRD(ctx, crd))
		out.waitFor(t, "- "+crd.Plural+"."+crd.Group+"/"+crd.Version+": released (CRD")
	}
	t.Log("\n" + out.String())
	assert.Equal(t, 4, strings.Count(out.String(), "informer started"), "one per CRD, and one for the new version")
	assert.Equal(t, 4, strings.Count(out.String(), "released"))
}

// output is what the watcher printed so far.
type output struct{ testlog.Buffer }

// waitFor waits until the output holds text.
func (b *output) waitFor(t *testing.T, text string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(b.String(), text) }, 30*time.Second, 10*time.Millisecond,
		"the output never said %q; it is:\n%s", text, b)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
