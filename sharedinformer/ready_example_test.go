package sharedinformer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
)

// A readiness probe: 503 with the reason until the cache holds its first
// list, 200 after.
func ExampleReady() {
	api := memlistwatch.New[*corev1.ConfigMap]()
	configMaps, _ := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: api, Name: "configmaps"})

	readyz := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if err := sharedinformer.Ready(configMaps); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	probe := func() {
		rec := httptest.NewRecorder()
		readyz.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}

	probe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = configMaps.Run(ctx); close(done) }()
	<-configMaps.Synced()
	probe()
	cancel()
	<-done
	// Output:
	// 503 configmaps: not synced yet: no failure seen (still listing, or never started)
	// 200 ok
}
