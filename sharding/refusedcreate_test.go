package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// While the API server refuses creates with a Status (429, not
// processed), no member Lease exists: nothing lands, nothing can be
// taken over or collected. A member keeps its one id until a create is
// accepted. (Before, each refused create burned its id: the member
// walked through a new id every couple of RetryPeriods.)
func TestAMemberDoesNotBurnIDsOnCreatesTheServerRefused(t *testing.T) {
	membersIDsWhileCreatesAreRefused(t, fakeapiserver.Fault{Status: http.StatusTooManyRequests})
}

// membersIDsWhileCreatesAreRefused runs a member against a server that
// answers its creates with refusal for 10 s, then accepts them, and
// requires that the member started one term under one id.
func membersIDsWhileCreatesAreRefused(t *testing.T, refusal fakeapiserver.Fault) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var mu sync.Mutex
		names := map[string]bool{}
		refusing := true
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/leases/") {
				names[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]] = true
			}
			if r.Method == http.MethodPost && refusing {
				return refusal
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		terms := runRecordingMember(ctx, must(leaderelection.NewClient(net.Config())))
		time.Sleep(10 * time.Second)
		mu.Lock()
		refusing = false
		mu.Unlock()
		time.Sleep(5 * time.Second)
		cancel()
		started := terms()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, started, 1)
		require.Len(t, names, 1, "the member went through %d ids (%v) while creates were refused (%+v); none of them ever had a Lease", len(names), names, refusal)
	})
}
