package leaderelection

import (
	"context"
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

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
}

func (l leases) get(ctx context.Context) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.client.Get().Namespace(l.namespace).Resource("leases").Name(l.name).Do(ctx).Into(out)
	return out, l.wrap("get", err)
}

// create fails with AlreadyExists (409) when another candidate created
// the Lease first.
func (l leases) create(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.client.Post().Namespace(l.namespace).Resource("leases").Body(lease).Do(ctx).Into(out)
	return out, l.wrap("create", err)
}

// update fails with Conflict (409) when lease.ResourceVersion is no
// longer the stored one.
func (l leases) update(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.client.Put().Namespace(l.namespace).Resource("leases").Name(l.name).Body(lease).Do(ctx).Into(out)
	return out, l.wrap("update", err)
}

func (l leases) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &LeaseError{Op: op, Namespace: l.namespace, Name: l.name, Err: err}
}
