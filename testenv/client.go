package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// CoreV1Client returns a client-go REST client for the core/v1 API group
// (ConfigMaps, Namespaces, Pods, ...) built from cfg.
//
// This is what client-go's typed clientset does underneath, without the
// clientset: a scheme that knows the Go types, a codec factory for them,
// and the group/version the client speaks.
//
// A cfg that sets no client-side rate limit (QPS 0, no RateLimiter) gets
// none, where client-go's rest would read it as 5 requests a second: a
// test's own setup writes are not what it measures, and that default
// stretched 50 creates to 8 s without a word.
func CoreV1Client(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion) // ListOptions, WatchEvent, Status
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// Namespace creates a namespace for one test, named after it, and returns
// its name. The test's objects should live there, so tests sharing a
// control plane never see each other's objects.
//
// At cleanup the namespace is deleted. With no controller-manager nothing
// empties it, so it stays Terminating with its contents until the control
// plane stops; that is harmless because no other test uses its name.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	client, err := CoreV1Client(cp.Config())
	if err != nil {
		t.Fatalf("core client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: namespacePrefix(t.Name()),
		Labels:       map[string]string{"listwatch.dev/test": "true"},
	}}
	created := &corev1.Namespace{}
	if err := client.Post().Resource("namespaces").Body(ns).Do(ctx).Into(created); err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.Delete().Resource("namespaces").Name(created.Name).Do(ctx).Error(); err != nil {
			t.Errorf("deleting namespace %s: %v", created.Name, err)
		}
	})
	return created.Name
}

// namespacePrefix turns a test name into a valid namespace name prefix:
// lower case, [a-z0-9-], short enough to leave room for the random suffix.
func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "test"
	}
	return fmt.Sprintf("%s-", s)
}
