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
	Shape      string  `json:"shape"`      // ConfigMaps or Pods
	Variant    Variant `json:"variant"`
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
	cfg, err := clientcmd.BuildConfigFromFlags("", job.Kubeconfig)
	if err != nil {
		return SyncSample{}, fmt.Errorf("scale: the sync's kubeconfig: %w", err)
	}
	cfg = unlimited(cfg)
	requests := RequestLog{Resource: job.Shape}
	cfg.Wrap(requests.Wrap)
	var build func() (running, error)
	switch job.Shape {
	case ConfigMaps:
		build, err = builder(ctx, cfg, configMapShape, job)
	case Pods:
		build, err = builder(ctx, cfg, podShape, job)
	default:
		err = fmt.Errorf("scale: no shape %q (want %q or %q)", job.Shape, ConfigMaps, Pods)
	}
	if err != nil {
		return SyncSample{}, err
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

// builder returns what builds job.Library's informer of s, in every
// namespace, as job.Variant says.
func builder[T informer.Object](ctx context.Context, cfg *rest.Config, s shape[T], job SyncJob) (func() (running, error), error) {
	switch job.Library {
	case Ours:
		return func() (running, error) { return buildOurs(ctx, cfg, s, metav1.NamespaceAll, job.Variant, nil) }, nil
	case ClientGo:
		return func() (running, error) { return buildClientGo(ctx, cfg, s, metav1.NamespaceAll, job.Variant, nil) }, nil
	}
	return nil, fmt.Errorf("scale: no library %q (want %q or %q)", job.Library, Ours, ClientGo)
}
