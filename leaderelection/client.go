package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/restclient"
)

// NewClient returns a REST client for coordination.k8s.io/v1 built from a
// copy of cfg, with a rate limiter of its own (cfg.QPS and cfg.Burst;
// cfg.RateLimiter is dropped, since sharing it is what this client is
// for avoiding). Pass it as Config.Client. A renew queued behind a
// controller's thousand requests in a shared limiter can miss the renew
// deadline; with its own client, only the leader election's requests
// (one every RetryPeriod) count against its QPS. It speaks protobuf, JSON
// accepted back, as client-go's clientsets do when asked for protobuf
// (kube-controller-manager's leader election among them): a Lease is a
// built-in type, and its protobuf costs a fraction of its JSON to encode
// and decode, at a renew every RetryPeriod and a sharder's poll of every
// member's Lease as often.
func NewClient(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, errors.New("leaderelection: NewClient: the rest.Config is nil")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = nil
	return restclient.New(cfg, coordinationv1.SchemeGroupVersion, serializer.NewCodecFactory(scheme).WithoutConversion(), true)
}

// LeaseError is a failed request for the Lease: Op is "get", "create" or
// "update". It unwraps to the API's error, so apierrors.IsForbidden and
// its kin see through it.
type LeaseError struct {
	Op              string
	Namespace, Name string
	Err             error
}

// Error names the request, the Lease and the cause.
func (e *LeaseError) Error() string {
	return fmt.Sprintf("leaderelection: %s lease %s/%s: %v", e.Op, e.Namespace, e.Name, e.Err)
}

// Unwrap returns the API's error.
func (e *LeaseError) Unwrap() error { return e.Err }

// leases reads and writes one Lease. Every write carries the
// resourceVersion it read, so the API server refuses it (409 Conflict)
// if anyone wrote in between: optimistic concurrency, no lock held.
type leases struct {
	client          *rest.RESTClient
	namespace, name string
	clock           informer.Clock // times the wait a 429 asks for (update)
}

func (l *leases) get(ctx context.Context) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.client.Get().Namespace(l.namespace).Resource("leases").Name(l.name).Do(ctx).Into(out)
	return out, l.wrap("get", err)
}

// create sends one POST of lease, and fails with AlreadyExists (409)
// when another candidate created the Lease first. It also reports
// whether the create may have landed, answered or not. It did not:
//
//   - when ctx ended while it waited for the client's rate limiter. It
//     waits here, not inside client-go (the POST itself goes
//     unthrottled), so that such a wait is known to have sent nothing
//     (TestAnOwnLeaseOnlyCandidateWhoseCreateNeverLeftTheClientStillLeads);
//   - when the server refused this POST (see refused).
//
// Every other failure may have landed: what the client's transport did
// with the request is not the elector's to know. A failed dial proves
// nothing either, since a RoundTripper may then send the request by
// another route
// (TestAnOwnLeaseOnlyCandidateWhoseClientFailsOverAfterAFailedDialCountsItsLostCreateAsPossiblyLanded,
// TestAnOwnLeaseOnlyCandidateWhosePOSTGoesThroughAnUntracedRouteCountsItsLostCreateAsPossiblyLanded).
//
// The POST is sent once (MaxRetries(0)): client-go would otherwise send
// it again on a 429 or a 5xx with a Retry-After, and answer with the
// last try's error only, so a first POST that landed (a 500
// ServerTimeout: its write may yet commit) followed by a refused retry
// would count as never sent; and it would wait out a 429's Retry-After
// until ctx ended, turning a refusal into a context error. Each POST's
// own answer is what the elector judges; its loop, every RetryPeriod,
// is the retry.
func (l *leases) create(ctx context.Context, lease *coordinationv1.Lease) (created *coordinationv1.Lease, mayHaveLanded bool, err error) {
	if limiter := l.client.GetRateLimiter(); limiter != nil {
		if err := limiter.Wait(ctx); err != nil {
			return nil, false, l.wrap("create", err)
		}
	}
	out := &coordinationv1.Lease{}
	err = l.client.Post().Namespace(l.namespace).Resource("leases").Body(lease).
		Throttle(nil).MaxRetries(0).Do(ctx).Into(out)
	return out, !refused(err), l.wrap("create", err)
}

// update fails with Conflict (409) when lease.ResourceVersion is no
// longer the stored one. The PUT is sent once (MaxRetries(0)), as the
// create is: client-go would send it again after a 500 ServerTimeout
// with a Retry-After, whose write may have landed, and answer with its
// retry's 409, which the elector would take for another's write and end
// a term over its own renew
// (TestALeaderWhoseLandedRenewIsRetriedByTheClientKeepsItsTerm). The
// elector's loop is the retry.
//
// A 429 with a Retry-After, which the server did not act on, is sent
// again after that wait, as client-go would, while ctx lasts: API
// Priority and Fairness throttling a renew costs it no attempt.
func (l *leases) update(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	for {
		out := &coordinationv1.Lease{}
		err := l.client.Put().Namespace(l.namespace).Resource("leases").Name(l.name).Body(lease).
			MaxRetries(0).Do(ctx).Into(out)
		seconds, delay := apierrors.SuggestsClientDelay(err)
		if !apierrors.IsTooManyRequests(err) || !delay || seconds <= 0 ||
			!informer.Sleep(ctx, l.clock, time.Duration(seconds)*time.Second) {
			return out, l.wrap("update", err)
		}
	}
}

// release is update with client-go's retries: a release is sent within
// one AttemptTimeout, with no loop of the elector's behind it, and a
// retry's 409 after a landed release is judged by the Lease read then
// (Elector.release), which no longer names this candidate.
func (l *leases) release(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.client.Put().Namespace(l.namespace).Resource("leases").Name(l.name).Body(lease).Do(ctx).Into(out)
	return out, l.wrap("update", err)
}

func (l *leases) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &LeaseError{Op: op, Namespace: l.namespace, Name: l.name, Err: err}
}

// refused reports whether err is the API server's answer that it did
// not act on a request: a Status of 4xx (a 429, a 403, an invalid
// object...), but a 408 timeout and a 409, which say nothing of
// whether, or report that, the object exists. A 5xx, a timeout or a
// lost connection may come after the write landed.
func refused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusConflict
}
