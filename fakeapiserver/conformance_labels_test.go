package fakeapiserver_test

import (
	"context"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// kube-apiserver refuses (422 Invalid) an object whose label key or
// value is not a valid one, a Lease's as a ConfigMap's: a candidate
// whose leaderelection.Config.Labels (which nothing validates) hold
// one never creates its Lease against kube-apiserver, and must not
// lead in the fake either.
func TestConformanceInvalidLabelsAreRefused(t *testing.T) {
	cp := testenv.Shared(t)
	conform(t, cp, invalidLabels)
}

func invalidLabels(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	for _, c := range []struct {
		what   string
		col    string
		object func(name string, labels map[string]any) map[string]any
	}{
		{"configmap", "/api/v1/namespaces/" + tg.namespace + "/configmaps", func(name string, labels map[string]any) map[string]any {
			return cm(name, labels, nil)
		}},
		{"lease", "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases", func(name string, labels map[string]any) map[string]any {
			return map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
				"metadata": map[string]any{"name": name, "labels": labels}, "spec": map[string]any{"holderIdentity": "x"}}
		}},
	} {
		code, obj := tg.do(ctx, t, "POST", c.col, "", c.object("value", map[string]any{"ring": "not a value"}))
		rec.add("%s with an invalid label value: %s", c.what, outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", c.col, "", c.object("key", map[string]any{"not a key": "v"}))
		rec.add("%s with an invalid label key: %s", c.what, outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", c.col, "", c.object("long", map[string]any{"ring": "v234567890123456789012345678901234567890123456789012345678901234"}))
		rec.add("%s with a 64-character label value: %s", c.what, outcome(code, obj))
	}
}
