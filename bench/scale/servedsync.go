package scale

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/listwatch/informer"
)

// SyncJob is one timed initial sync against a control plane: what the
// ladder hands to a process of its own (Config.SyncChild) for every
// sample of a control-plane sync row.
type SyncJob struct {
	Kubeconfig string  `json:"kubeconfig"` // the control plane's kubeconfig file
	Library    string  `json:"library"`    // Ours or ClientGo
	Shape      string  `json:"shape"`      // ConfigMaps, Pods or Widgets
	Variant    Variant `json:"variant"`    // one of VariantsOf(Shape)
	// Objects is how many the informer must cache once synced: every
	// object of the shape in the cluster.
	Objects int `json:"objects"`
}

// SyncSample is what one SyncJob measured in its process.
type SyncSample struct {
	Seconds float64 `json:"seconds"` // from start to synced
	// CPU is the process's CPU-seconds (user and system) from start to
	// synced: the informer's, since nothing else runs in it meanwhile.
	CPU float64 `json:"cpu"`
	// HeapPerObject is the live heap the informer added per cached
	// object, after a forced GC, the informer still running.
	HeapPerObject float64 `json:"heapPerObject"`
	// Request is the request that carried the initial list ("GET URL
	// (Accept: …)"), Answer its Content-Type and encoding (RequestLog).
	Request string `json:"request"`
	Answer  string `json:"answer"`
}

// RunSync builds job's informer of every namespace, syncs it once and
// measures it, in this process. It is what `scale -sync` runs, one sync
// per process, so that every sample starts, as a controller does, with an
// empty heap and buffers grown from nothing.
func RunSync(ctx context.Context, job SyncJob) (SyncSample, error) {
	if err := checkSync(job.Shape, job.Library, job.Variant); err != nil {
		return SyncSample{}, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", job.Kubeconfig)
	if err != nil {
		return SyncSample{}, fmt.Errorf("scale: the sync's kubeconfig: %w", err)
	}
	cfg = unlimited(cfg)
	requests := RequestLog{Resource: job.Shape}
	cfg.Wrap(requests.Wrap)
	build := func() (running, error) {
		return buildSync(ctx, cfg, job.Shape, job.Library, metav1.NamespaceAll, job.Variant, nil)
	}
	s, err := syncOnce(ctx, build, job.Objects)
	if err != nil {
		return SyncSample{}, err
	}
	out := SyncSample{Seconds: s.seconds, CPU: s.cpu, HeapPerObject: s.heapPerObject}
	out.Request, out.Answer = requests.List()
	if out.Request == "" {
		return SyncSample{}, fmt.Errorf("scale: %s synced %d %s without a list request the log could see", job.Library, job.Objects, job.Shape)
	}
	return out, nil
}

// buildSync builds lib's informer (Ours or ClientGo) of the objects of
// shape in ns, as v says, with a handler that calls seen once per add or
// update (seen may be nil). An impossible combination is an error
// (checkSync).
func buildSync(ctx context.Context, cfg *rest.Config, shape, lib, ns string, v Variant, seen func()) (running, error) {
	if err := checkSync(shape, lib, v); err != nil {
		return running{}, err
	}
	switch shape {
	case ConfigMaps:
		return buildBuiltIn(ctx, cfg, configMapShape, lib, ns, v, seen)
	case Pods:
		return buildBuiltIn(ctx, cfg, podShape, lib, ns, v, seen)
	}
	return buildWidgets(ctx, cfg, lib, ns, v, seen)
}

// buildBuiltIn builds lib's informer of the built-in shape s.
func buildBuiltIn[T informer.Object](ctx context.Context, cfg *rest.Config, s shape[T], lib, ns string, v Variant, seen func()) (running, error) {
	if lib == Ours {
		return buildOurs(ctx, cfg, s, ns, v, seen)
	}
	return buildClientGo(ctx, cfg, s, ns, v, seen)
}
