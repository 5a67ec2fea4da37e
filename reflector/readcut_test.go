package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

type cutBody struct {
	r    io.ReadCloser
	left int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("cut: %w", context.DeadlineExceeded)
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}
func (b *cutBody) Close() error { return b.r.Close() }

type cutter struct {
	next http.RoundTripper
	at   *int
}

func (c cutter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && r.URL.Query().Get("watch") == "" && *c.at >= 0 {
		resp.Body = &cutBody{r: resp.Body, left: *c.at}
	}
	return resp, err
}

// A LIST answer cut at every byte: each failure keeps its cause.
func TestAListAnswerCutAtAnyByteKeepsTheCauseOfTheFailure(t *testing.T) {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	client, err := testenv.CoreV1Client(mem.Config())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
		if err := client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(t.Context()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	at := -1
	cfg := mem.Config()
	cfg.QPS = -1 // no client-side rate limit: thousands of LISTs
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return cutter{next: rt, at: &at} }
	src := reflector.Source{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "default"}
	pb := src
	pb.Protobuf = true
	lists := map[string]func() error{}
	add := func(name string, list func(context.Context, metav1.ListOptions) error) {
		lists[name] = func() error { return list(t.Context(), metav1.ListOptions{}) }
	}
	typed := must(reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, newScheme(t), src))
	add("typed JSON", func(ctx context.Context, o metav1.ListOptions) error { _, _, err := typed.List(ctx, o); return err })
	typedPB := must(reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, newScheme(t), pb))
	add("typed protobuf", func(ctx context.Context, o metav1.ListOptions) error { _, _, err := typedPB.List(ctx, o); return err })
	un := must(reflector.NewUnstructuredListerWatcher(cfg, src))
	add("unstructured", func(ctx context.Context, o metav1.ListOptions) error { _, _, err := un.List(ctx, o); return err })
	meta := must(reflector.NewMetadataListerWatcher(cfg, src))
	add("metadata", func(ctx context.Context, o metav1.ListOptions) error { _, _, err := meta.List(ctx, o); return err })
	metaPB := must(reflector.NewMetadataListerWatcher(cfg, pb))
	add("metadata protobuf", func(ctx context.Context, o metav1.ListOptions) error { _, _, err := metaPB.List(ctx, o); return err })

	for name, list := range lists {
		at = -1
		if err := list(); err != nil {
			t.Fatalf("%s uncut: %v", name, err)
		}
		for at = 0; at < 4000; at++ {
			err := list()
			if err == nil {
				break // the whole answer fit before the cut
			}
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, reflector.ErrUnexpectedObject) {
				t.Errorf("%s cut after %d bytes: %v", name, at, err)
			}
		}
	}
}
