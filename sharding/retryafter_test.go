package sharding_test

import (
	"net/http"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
)

// As TestAMemberDoesNotBurnIDsOnCreatesTheServerRefused, with the 429 a
// real API server sends: API Priority and Fairness names a Retry-After
// (fakeapiserver.Fault.RetryAfter: "as a real server's 429 does").
// The elector sends each create once and sees the 429 itself, so the
// member keeps its id. (Before, client-go waited the Retry-After out to
// retry, the attempt timed out meanwhile, the refused create counted as
// possibly landed, and the member burned an id on every one.)
func TestAMemberDoesNotBurnIDsOnCreatesRefusedWithARetryAfter(t *testing.T) {
	membersIDsWhileCreatesAreRefused(t, fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1})
}
