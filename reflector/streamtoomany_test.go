package reflector_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/reflector"
)

// Not every 4xx answer to a streaming list is a refusal: 429 (too many
// requests) and 410 are worth retrying, so the reflector streams again
// after the backoff, reports each, and never falls back to LIST for them.
// (Found by review: docs/03 and the package doc said a 4xx answer gives
// LIST for the rest of Run.)
func TestAStreamingListAnswered429IsStreamedAgainNotListed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHostileServer(t)
		hold := s.HoldOpen()
		s.Answer(nil, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				status(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)(w, r)
				return
			}
			hold(w, r)
		})
		trace := &traceLog{}
		_, errs, _ := hostileReflector(t, s, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.StreamingList = true
			o.Trace = trace.hook
		})
		time.Sleep(time.Second) // several backoffs (50 ms doubling to 400 ms)
		synctest.Wait()
		assert.Empty(t, s.Requests(false), "no LIST: a 429 is no refusal of streaming")
		assert.Empty(t, trace.of(reflector.KindFallback))
		assert.GreaterOrEqual(t, len(s.Requests(true)), 3, "streamed again after each backoff")
		assert.Equal(t, len(s.Requests(true)), errs.count(apierrors.IsTooManyRequests), "each 429 reported: %v", errs.all())
	})
}
