package reflector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// kube-apiserver serves custom resources as JSON only, but their
// metadata-only form is a built-in type, which it encodes in protobuf: a
// metadata-only ListerWatcher asked for protobuf gets it, for its LIST
// and its WATCH, and decodes both.
func TestAMetadataOnlyListerWatcherReadsACustomResourceInProtobuf(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	crd := testenv.CRD{Group: "pbmeta.listwatch.dev", Version: "v1", Kind: "Sprocket", Plural: "sprockets"}
	require.NoError(t, cp.InstallCRD(ctx, crd))
	t.Cleanup(func() { _ = cp.DeleteCRD(context.Background(), crd) }) // the control plane is shared
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	path := "/apis/pbmeta.listwatch.dev/v1/namespaces/" + ns + "/sprockets"
	create := func(name string) {
		obj, _ := json.Marshal(map[string]any{"apiVersion": "pbmeta.listwatch.dev/v1", "kind": "Sprocket",
			"metadata": map[string]any{"name": name, "labels": map[string]string{"size": "small"}}})
		require.NoError(t, client.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(obj).Do(ctx).Error())
	}
	create("s1")

	cfg := rest.CopyConfig(cp.Config())
	answers := &contentTypes{}
	cfg.WrapTransport = answers.wrap
	lw, err := reflector.NewMetadataListerWatcher(cfg, reflector.Source{
		Resource: schema.GroupVersionResource{Group: crd.Group, Version: crd.Version, Resource: crd.Plural}, Namespace: ns, Protobuf: true,
	})
	require.NoError(t, err)
	items, lm, err := lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "s1", items[0].Name)
	assert.Equal(t, map[string]string{"size": "small"}, items[0].Labels)

	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: lm.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	create("s2")
	select {
	case ev := <-w.ResultChan():
		require.Equal(t, watch.Added, ev.Type, "%v", ev.Object)
		obj, ok := ev.Object.(*metav1.PartialObjectMetadata)
		require.True(t, ok, "a %T", ev.Object)
		assert.Equal(t, "s2", obj.Name)
		assert.Equal(t, map[string]string{"size": "small"}, obj.Labels)
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	assert.Equal(t, []string{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch"}, answers.seen())
}

// contentTypes records the Content-Type of every answer.
type contentTypes struct {
	mu  sync.Mutex
	got []string
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.got = append(c.got, resp.Header.Get("Content-Type"))
			c.mu.Unlock()
		}
		return resp, err
	})
}

func (c *contentTypes) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
