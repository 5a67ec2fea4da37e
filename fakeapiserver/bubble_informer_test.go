package fakeapiserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// A shared informer built from a rest.Config runs against the fake over
// the in-memory network, inside a bubble: writes, a compaction and a cut
// watch later, its cache equals the server at quiescence, on simulated
// time alone.
func TestInformerInABubbleConvergesOnTheFakeServer(t *testing.T) {
	for name, opt := range map[string]sharedinformer.InformerOption{
		"PagedListProtobuf":     sharedinformer.WithReflector(reflector.Tuning{}),
		"StreamingListProtobuf": sharedinformer.WithReflector(reflector.Tuning{StreamingList: true}),
	} {
		t.Run(name, func(t *testing.T) { informerConverges(t, opt) })
	}
}

func informerConverges(t *testing.T, opt sharedinformer.InformerOption) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		net := fakeapiserver.ServeInMemory(srv)
		defer net.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		factory, err := sharedinformer.NewFactory(net.Config(), sharedinformer.FactoryOptions{Scheme: scheme, Logger: quiet,
			Trace: func(e informer.TraceEvent) {
				if e.Stage == informer.StageReflector {
					t.Logf("%v %s %s %s %s", e.Time.Format("15:04:05.000"), e.Kind, e.Key, e.ResourceVersion, e.Detail)
				}
			}})
		require.NoError(t, err)
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace("default"), opt)
		require.NoError(t, err)
		factory.Start(ctx)
		require.NoError(t, factory.WaitForCacheSync(ctx))

		client, err := testenv.CoreV1Client(net.Config())
		require.NoError(t, err)
		write := func(verb, name string, data map[string]string) {
			t.Helper()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
			var err error
			switch verb {
			case "create":
				err = client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error()
			case "update":
				err = client.Put().Namespace("default").Resource("configmaps").Name(name).Body(cm).Do(ctx).Error()
			case "delete":
				err = client.Delete().Namespace("default").Resource("configmaps").Name(name).Do(ctx).Error()
			}
			require.NoError(t, err, "%s %s", verb, name)
		}
		start := time.Now()
		for i := range 20 {
			write("create", fmt.Sprintf("cm-%02d", i), map[string]string{"i": "0"})
		}
		synctest.Wait()
		requireCacheEqualsServer(t, srv, cms)

		// A cut watch: the reflector watches again from its last resourceVersion.
		srv.CutWatches()
		write("update", "cm-03", map[string]string{"i": "1"})
		write("delete", "cm-04", nil)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		requireCacheEqualsServer(t, srv, cms)

		// Writes, a compaction past them and a cut: the re-watch gets 410,
		// the reflector relists, and the cache still converges.
		write("delete", "cm-05", nil)
		write("update", "cm-06", map[string]string{"i": "2"})
		rv := srv.ResourceVersion()
		srv.CutWatches()
		write("create", "cm-99", nil)
		write("update", "cm-07", map[string]string{"i": "3"})
		srv.Compact(srv.ResourceVersion())
		_ = rv
		time.Sleep(time.Minute)
		synctest.Wait()
		requireCacheEqualsServer(t, srv, cms)
		t.Logf("simulated time covered: %v", time.Since(start))

		cancel()
		factory.Wait()
	})
}

// requireCacheEqualsServer compares the informer's cache with the
// server's objects: the same names at the same resourceVersions.
func requireCacheEqualsServer(t *testing.T, srv *fakeapiserver.Server, inf *sharedinformer.Informer[*corev1.ConfigMap]) {
	t.Helper()
	want := map[string]string{}
	for _, u := range srv.Objects(corev1.SchemeGroupVersion.WithResource("configmaps")) {
		want[u.GetNamespace()+"/"+u.GetName()] = u.GetResourceVersion()
	}
	got := map[string]string{}
	for _, cm := range inf.Lister().List(labels.Everything()) {
		got[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	require.Equal(t, want, got)
}
