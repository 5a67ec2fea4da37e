package reflector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// configMaps is a ConfigMap client for one namespace of the real
// control plane, for the writes the tests make.
type configMaps struct {
	t      *testing.T
	client *rest.RESTClient
	ns     string
}

func newConfigMaps(t *testing.T, cfg *rest.Config, ns string) *configMaps {
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	return &configMaps{t: t, client: client, ns: ns}
}

func (c *configMaps) create(name string) *corev1.ConfigMap {
	c.t.Helper()
	out := &corev1.ConfigMap{}
	require.NoError(c.t, c.client.Post().Namespace(c.ns).Resource("configmaps").
		Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "test"}}, Data: map[string]string{"v": "1"}}).
		Do(c.t.Context()).Into(out))
	return out
}

func (c *configMaps) update(obj *corev1.ConfigMap, value string) *corev1.ConfigMap {
	c.t.Helper()
	obj = obj.DeepCopy()
	obj.Data = map[string]string{"v": value}
	out := &corev1.ConfigMap{}
	require.NoError(c.t, c.client.Put().Namespace(c.ns).Resource("configmaps").Name(obj.Name).Body(obj).Do(c.t.Context()).Into(out))
	return out
}

func (c *configMaps) delete(name string) {
	c.t.Helper()
	require.NoError(c.t, c.client.Delete().Namespace(c.ns).Resource("configmaps").Name(name).Do(c.t.Context()).Error())
}

// state is what the server holds: key → resourceVersion.
func (c *configMaps) state() map[string]string {
	c.t.Helper()
	list := &corev1.ConfigMapList{}
	require.NoError(c.t, c.client.Get().Namespace(c.ns).Resource("configmaps").Do(c.t.Context()).Into(list))
	out := map[string]string{}
	for _, cm := range list.Items {
		out[c.ns+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

// converged waits until the mirror equals the server's state, for as
// long as hangGuard.
func converged(t *testing.T, mirror func() map[string]string, c *configMaps) {
	t.Helper()
	var want map[string]string
	require.Eventually(t, func() bool {
		want = c.state()
		return fmt.Sprint(mirror()) == fmt.Sprint(want)
	}, hangGuard, 50*time.Millisecond, "the mirror never converged: have %v, want %v", mirror(), want)
}

// agent returns a User-Agent unique to this test, so the audit log can
// count this test's requests alone.
func agent(t *testing.T) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("reflector-test-%s-%d", name, rand.Uint32())
}

// withAgent returns a copy of cfg that identifies itself as ua.
func withAgent(cfg *rest.Config, ua string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = ua
	return cfg
}

// countRequests counts this test's requests of one verb on ConfigMaps.
func countRequests(t *testing.T, cp *testenv.ControlPlane, ua, verb string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cp.CountRequests(ctx, testenv.RequestFilter{Verb: verb, UserAgent: ua})
	require.NoError(t, err)
	return n
}

func typedConfigMapLW(t *testing.T, cfg *rest.Config, ns string, protobuf bool) *reflector.RESTListerWatcher[*corev1.ConfigMap] {
	t.Helper()
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, newScheme(t), reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns, Protobuf: protobuf,
	})
	require.NoError(t, err)
	return lw
}

// live is a reflector over one namespace's ConfigMaps on a real
// control plane, writing into a recorder.
type live struct {
	store *recorder[*corev1.ConfigMap]
	errs  *errorLog
	trace *traceLog
	r     *reflector.Reflector[*corev1.ConfigMap]
	stop  func() // returns once Run has; also called at cleanup
}

// cmReflector starts a live reflector with test-friendly backoff.
func cmReflector(t *testing.T, cfg *rest.Config, ns string, tweak func(*reflector.Options[*corev1.ConfigMap])) *live {
	t.Helper()
	l := &live{store: newRecorder[*corev1.ConfigMap](), errs: &errorLog{}, trace: &traceLog{}}
	opts := reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: typedConfigMapLW(t, cfg, ns, false), Store: l.store, OnError: l.errs.hook, Trace: l.trace.hook,
		Tuning: reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
	}
	if tweak != nil {
		tweak(&opts)
	}
	l.r = must(reflector.New(opts))
	l.stop = run(t, l.r)
	return l
}

func newScheme(t *testing.T) *runtime.Scheme {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	return scheme
}

// watching waits until r has listed and opened a watch.
func watching(t *testing.T, trace *traceLog, n int) {
	t.Helper()
	eventually(t, func() bool { return len(trace.of(reflector.KindWatch)) >= n }, "no watch #%d", n)
}
