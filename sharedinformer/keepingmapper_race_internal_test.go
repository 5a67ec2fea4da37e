package sharedinformer

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
)

// What the mapper remembers is read with no lock (judge) while
// builds and resets write it under mu, zoo's discovery flipping between
// 200 and 503 so that builds carry over: -race reports nothing.
func TestWhatTheMapperRemembersIsReadRaceFreeDuringBuildsAndResets(t *testing.T) {
	var answer atomic.Int32
	_, f := zooAnsweringFactory(t, runtime.NewScheme(), fakeapiserver.CRD{Kind: "Octopus", Plural: "octopodes"}, func() int { return int(answer.Load()) })
	km := f.mapper.(*keepingMapper)
	gvr := zooGroupVersion.WithResource("octopodes")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				km.judge(gvr, listedResource{kind: "Octopus", namespaced: true})
				for _, g := range km.knownNow() { // read every element, as a build does
					for _, rs := range g.VersionedResources {
						for _, r := range rs {
							_ = r.Kind
						}
					}
					_ = len(g.Group.Versions)
				}
			}
		}()
	}
	for i := range 60 {
		if i%2 == 0 {
			answer.Store(http.StatusServiceUnavailable)
		} else {
			answer.Store(0)
		}
		_, _ = km.KindForWithContext(t.Context(), gvr)
		km.reset(t.Context(), []string{"", "other"}[i%2])
		_, _ = km.KindForWithContext(t.Context(), gvr)
		if i%7 == 0 {
			km.reset(t.Context(), zooGroupVersion.Group)
		}
	}
	close(stop)
	wg.Wait()
}
