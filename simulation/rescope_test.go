package simulation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	si "github.com/listwatch/informer/sharedinformer"
)

// A CRD deleted and created again cluster-scoped serves no namespace of
// Widgets: a held informer of one says so and caches nothing ("not
// served says so"), and InformerFor refuses a namespace with a
// *ScopeError, which a holder keeps, once the faults end, as it would
// keep a hold. A refusal while the CRD is served namespaced breaks
// "refused only when not served". (With the served check blind to
// scope, the held informer retried its 404 for ever, told it was served:
// the first half failed.)
func TestACRDRecreatedClusterScopedIsNotServedToAHeldInformerOfANamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		h := keep(t, w, fo, ctx, "v1")
		if err := si.WaitForCacheSync(t.Context(), h.inf); err != nil {
			t.Fatal(err)
		}

		w.applyCRD(Fault{Kind: RescopeCRD})
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := w.crdQuiescent(); len(got) != 0 {
			t.Fatalf("a held informer of namespace %s, the CRD cluster-scoped: %v", Namespace, got)
		}

		_, refusal := fo.ask(t.Context(), w, "v1", "the test", stopBound)
		if _, ok := errors.AsType[*si.ScopeError](refusal); !ok {
			t.Fatalf("InformerFor of namespace %s, the CRD cluster-scoped: %v, want a *ScopeError", Namespace, refusal)
		}
		holding, end := context.WithCancel(t.Context())
		kept := make(chan bool, 1)
		go func() { kept <- keepRefusal(holding, w, fo, refusal) }()
		synctest.Wait()
		if got := w.crd.refusedBy(fo.replica.name); got != 1 {
			t.Fatalf("replica %s keeps %d refusals, want 1", fo.replica.name, got)
		}
		end()
		if !<-kept {
			t.Fatal("the refusal of a cluster-scoped CRD's namespace was not kept")
		}

		w.applyCRD(Fault{Kind: RescopeCRD}) // namespaced again
		if keepRefusal(t.Context(), w, fo, refusal) {
			t.Fatal("a refusal was kept while the CRD is served namespaced")
		}
		if got := violations(w.crd.violations); got["refused only when not served"] != 1 {
			t.Fatalf("violations %v, want one of refused only when not served", got)
		}
	})
}

// A typed keeper's informer (the widget Go type) is judged as a
// holder's hold is: synced and equal to the server, it passes; stopped,
// with a Widget written since, its cache is stale ("held informer equals
// server").
func TestATypedKeepersStaleCacheBreaksHeldInformerEqualsServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _ := crdWorldForTest(t)
		fo := newFactoryOf(w, &replica{name: "r0-0", cfg: w.admin.Config()}, widgetScheme())
		ctx, stop := context.WithCancel(t.Context())
		defer fo.f.Wait()
		defer stop()
		k, err := keepTyped(ctx, w, fo)
		if err != nil {
			t.Fatal(err)
		}
		w.crd.typed[k] = struct{}{}
		if err := si.WaitForCacheSync(t.Context(), k.inf); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // its handler has caught up
		if got := w.crdQuiescent(); len(got) != 0 {
			t.Fatalf("a synced typed informer equal to the server was reported: %v", got)
		}

		stop() // the informer stops: its cache is frozen
		synctest.Wait()
		w.writeWidget(t, http.MethodPost, "", fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":"w-02"},"spec":{"tick":7}}`, CRDGroup))
		if got := violations(w.crdQuiescent()); got["held informer equals server"] != 1 {
			t.Fatalf("a stale typed cache: violations %v, want one of held informer equals server", got)
		}
	})
}
