package chaos_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// bodyServer answers every request with 200 and the body it holds now.
type bodyServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte // guarded by mu
}

func newBodyServer(f *testing.F) *bodyServer {
	s := &bodyServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body := s.body
		s.mu.Unlock()
		if r.URL.Query().Get("watch") != "true" {
			// The reflector's LIST, in the watch fuzzer: a good one.
			body = []byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[]}`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}))
	f.Cleanup(s.Close)
	return s
}

func (s *bodyServer) serve(body []byte) {
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
}

func fuzzLW(f *testing.F, url string) *reflector.RESTListerWatcher[*corev1.ConfigMap] {
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: url, QPS: -1}, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns",
	})
	if err != nil {
		f.Fatal(err)
	}
	return lw
}

// FuzzListBody serves arbitrary bytes as a LIST response to
// RESTListerWatcher.List: it must never panic, and what it accepts must be
// a list of real ConfigMaps, never a nil one.
func FuzzListBody(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"9"}}]}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"x"},"items":[null]}`,
		`{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[{}]}`,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"name":1}}]}`,
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`,
		`{"kind":"ConfigMapList","apiVersion":"v2"}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","items":{}}`,
		`{"kind":`, `null`, `[]`, ``, "\x00\xff", `<html>hello</html>`,
	} {
		f.Add([]byte(seed))
	}
	s := newBodyServer(f)
	lw := fuzzLW(f, s.URL)
	f.Fuzz(func(t *testing.T, body []byte) {
		s.serve(body)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		items, _, err := lw.List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for i, cm := range items {
			if informer.IsNil(cm) {
				t.Fatalf("List accepted %q with a nil item %d", body, i)
			}
		}
	})
}

// FuzzWatchStream serves arbitrary bytes as a WATCH stream to a whole
// reflector: whatever the stream holds, the reflector must not panic, and
// its store receives only real ConfigMaps.
func FuzzWatchStream(f *testing.F) {
	for _, seed := range []string{
		`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"11"}}}`,
		`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12"}}}`,
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}}`,
		`{"type":"ERROR","object":{"kind":"ConfigMap","apiVersion":"v1"}}`,
		`{"type":"ERROR","object":null}`,
		`{"type":"DELETED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"}}}`,
		`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1"}}`,
		`{"type":"NONSENSE","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}}}`,
		`{"type":"ADDED"}`, `{"type":"ADDED","object":{}}`, `{}`, `null`, `{"type":`, "\n\n\n", "garbage\n",
		`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"11"}}}` + "\n" +
			`{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"13"}}}`,
	} {
		f.Add([]byte(seed))
	}
	s := newBodyServer(f)
	lw := fuzzLW(f, s.URL)
	f.Fuzz(func(t *testing.T, body []byte) {
		s.serve(body)
		store := &checkingStore{t: t}
		watched := make(chan struct{})
		var once sync.Once
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
			ListerWatcher: lw, Store: store,
			OnError: func(error) {},
			Trace: func(e informer.TraceEvent) {
				// The first watch has ended, one way or another.
				if e.Kind == reflector.KindWatchEnd || e.Kind == reflector.KindBackoff || e.Kind == reflector.KindRelist {
					once.Do(func() { close(watched) })
				}
			},
		}))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		select {
		case <-watched:
		case <-ctx.Done():
		}
		cancel()
		<-done
	})
}

// checkingStore fails the fuzz test if a nil or nameless object reaches it.
type checkingStore struct{ t *testing.T }

func (s *checkingStore) check(op string, cm *corev1.ConfigMap) error {
	if informer.IsNil(cm) {
		s.t.Errorf("%s of a nil ConfigMap", op)
	}
	return nil
}

func (s *checkingStore) Add(cm *corev1.ConfigMap) error    { return s.check("add", cm) }
func (s *checkingStore) Update(cm *corev1.ConfigMap) error { return s.check("update", cm) }
func (s *checkingStore) Delete(cm *corev1.ConfigMap) error { return s.check("delete", cm) }
func (s *checkingStore) Resync() error                     { return nil }
func (s *checkingStore) Bookmark(string) error             { return nil }
func (s *checkingStore) Replace(cms []*corev1.ConfigMap, _ string) error {
	for _, cm := range cms {
		_ = s.check("replace", cm)
	}
	return nil
}
