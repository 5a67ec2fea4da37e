package sharding_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member released its Lease (dead for certain) and owns nothing, so
// the sharder collects the Lease: deletes it and forgets the member. A
// poll listed the Leases just before the delete and is answered just
// after the forget: recorded as news, it brings the member back as
// "released"; the next poll finds its Lease gone, an absence that a
// lease duration later is a suspect, and the sharder creates the Lease of
// a member gone for good (a takeover, which requeues every key), only to
// collect it again. Nothing should create a collected member's Lease.
func TestACollectedMemberLeaseIsNotCreatedAgainByAPollFromBeforeTheDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		const ns, id = "default", "released"
		name := sharding.LeaseName(ring, id)
		var held heldPoll
		var collected atomic.Bool
		recreated := make(chan time.Time, 1)
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/leases/"+name):
				held.write(w, r, srv) // the collection, once the next poll has read the Leases before it
				collected.Store(true)
				return
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases") && collected.Load():
				body := &coordinationv1.Lease{}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, r)
				if rec.Code == http.StatusCreated && decodeInto(rec.Body.Bytes(), body) == nil && body.Name == name {
					select {
					case recreated <- time.Now():
					default:
					}
				}
				copyRecorded(w, rec)
				return
			case held.poll(w, r, srv, func() {
				time.Sleep(50 * time.Millisecond) // the delete is answered, and the member forgotten, first
			}):
				return
			}
			srv.ServeHTTP(w, r)
		})
		net := fakeapiserver.ServeInMemory(handler)
		defer net.Close()
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(net.Config()))
		seconds := int32(leaseDuration / time.Second)
		require.NoError(t, leases.Post().Namespace(ns).Resource("leases").Body(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id}},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &seconds}, // released
		}).Do(ctx).Error())
		var labels sync.Map
		startSharder(ctx, t, &wg, net.Config(), ns, &labels)
		startMembers(ctx, t, &wg, net.Config(), ns, []string{"m1"}, nil) // someone alive, so the sharder shards

		time.Sleep(10 * leaseDuration)
		require.True(t, collected.Load(), "the released member's Lease was never collected: the test proves nothing")
		require.True(t, held.heldBack.Load(), "no poll was answered from before the collection: the test proves nothing")
		select {
		case <-recreated:
			t.Fatal("the sharder created the Lease of a member it had collected, from a poll sent before the collection")
		default:
		}
	})
}

func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func decodeInto(b []byte, lease *coordinationv1.Lease) error { return json.Unmarshal(b, lease) }
