package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/events"
)

// Three refusals of one ConfigMap, recorded before Run sends, are one
// Event with a series of three. A stand-in for the API server prints the
// write it receives.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev eventsv1.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			panic(err)
		}
		fmt.Println(req.Method, req.URL.Path)
		fmt.Println(ev.Type, ev.Reason, ev.Action, ev.Regarding.Kind, ev.Regarding.Name, "x", ev.Series.Count)
		fmt.Println(ev.Note)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	recorder, err := events.New(&rest.Config{Host: srv.URL}, events.Options{Controller: "example.com/secret-copier", Instance: "copier-0", Scheme: scheme})
	if err != nil {
		panic(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	for range 3 {
		if err := recorder.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret %s exists and this ConfigMap does not control it", cm.Name); err != nil {
			panic(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = recorder.Run(ctx) }()
	for recorder.Stats().Created == 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("%+v\n", recorder.Stats())
	// Output:
	// POST /apis/events.k8s.io/v1/namespaces/shop/events
	// Warning SecretNotOurs Create ConfigMap web x 3
	// secret web exists and this ConfigMap does not control it
	// {Created:1 Updated:0 Repeats:2 Dropped:0 Refused:0 Recorded:3}
}
