package scale

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// Started is one of the ladder's informers, built and running: what
// syncpair's child times, so that syncpair and the ladder measure the
// very same informers.
type Started struct {
	// HasSynced reports whether the cache holds the initial list.
	HasSynced func() bool
	// Len is how many objects the cache holds.
	Len func() int
	// Stop ends the informer and waits until every goroutine it started
	// has returned.
	Stop func()
}

// Start builds lib's informer (Ours or ClientGo) of every object of shape
// in every namespace, as v says (one of VariantsOf(shape)), from cfg as
// it is, and starts it; ctx bounds the building (discovery) and the
// informer's run. A library, shape or variant the ladder does not have
// is an error, and nothing is started.
func Start(ctx context.Context, cfg *rest.Config, shape, lib string, v Variant) (Started, error) {
	r, err := buildSync(ctx, cfg, shape, lib, metav1.NamespaceAll, v, nil)
	if err != nil {
		return Started{}, err
	}
	return startRunning(r), nil
}

// StartOurs builds our informer of T in every namespace from a Factory at
// the ladder's defaults, as Start builds Ours, with opts given to
// InformerFor, and starts it: an informer the ladder has no row for, such
// as syncpair's ours-unstructured-json (ForResource(WidgetsResource),
// WithJSON()).
func StartOurs[T informer.Object](ctx context.Context, cfg *rest.Config, opts ...sharedinformer.InformerOption) (Started, error) {
	r, err := buildOursFactory[T](ctx, cfg, nil, opts...)
	if err != nil {
		return Started{}, err
	}
	return startRunning(r), nil
}

// startRunning starts r and returns it as a Started.
func startRunning(r running) Started {
	r.start()
	return Started{
		HasSynced: func() bool {
			select {
			case <-r.synced:
				return true
			default:
				return false
			}
		},
		Len:  r.len,
		Stop: r.stop,
	}
}
