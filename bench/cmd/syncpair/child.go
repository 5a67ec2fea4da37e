package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/listwatch/informer/bench/scale"
	"github.com/listwatch/informer/sharedinformer"
)

// variant builds and starts one informer a sample times, and returns
// whether it has synced and how many objects it caches.
type variant func(ctx context.Context, cfg *rest.Config) (synced func() bool, count func() int, err error)

// configMapVariants are the informers a sample of -shape configmaps can
// time, each of every ConfigMap in the cluster, at a library's defaults
// unless the name says otherwise.
var configMapVariants = map[string]variant{
	"ours": func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		return ours(ctx, cfg)
	},
	// ours-stripped drops managedFields, the transform pitfall 7 teaches;
	// ours-interned also makes every object share one copy of the
	// strings many objects repeat that the informer does not share
	// itself (label keys and values, data keys; issue 30's last lever).
	"ours-stripped": func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		return ours(ctx, cfg, sharedinformer.WithTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			cm.ManagedFields = nil
			return cm, nil
		}))
	},
	"ours-interned": func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		return ours(ctx, cfg, sharedinformer.WithTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			cm.ManagedFields = nil
			internConfigMap(cm)
			return cm, nil
		}))
	},
	"client-go": clientGo,
	// ours-identity asks the apiserver not to gzip its answers: on a
	// local connection compressing a 100 MB list costs the server CPU
	// and saves nothing.
	"ours-identity": func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
		return ours(ctx, cfg)
	},
}

func ours(ctx context.Context, cfg *rest.Config, opts ...sharedinformer.InformerOption) (func() bool, func() int, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, opts...)
	if err != nil {
		return nil, nil, err
	}
	f.Start(ctx)
	return inf.HasSynced, inf.Indexer().Len, nil
}

func clientGo(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(ctx.Done())
	return inf.HasSynced, func() int { return len(inf.GetStore().ListKeys()) }, nil
}

// sample is what one child reports.
type sample struct {
	Variant   string  `json:"variant"`
	Seconds   float64 `json:"seconds"`    // from start to synced
	CPU       float64 `json:"cpu"`        // the child's user+system CPU-seconds until synced
	Objects   int     `json:"objects"`    // in the cache when synced
	Request   string  `json:"request"`    // the request that carried the list
	Answer    string  `json:"answer"`     // its Content-Type and Content-Encoding
	ServerCPU float64 `json:"server_cpu"` // filled in by the parent
	Load      float64 `json:"load"`       // filled in by the parent
	// Others is the user CPU, in cores, that processes other than the
	// child, etcd, the apiserver and the parent took during the sample
	// (filled in by the parent): a sample above scale.ForeignLoadLimit is not
	// judged.
	Others float64 `json:"others"`
	// HeapPerObject is the live heap the informer added, over the objects
	// it caches, once synced; PeakOverSteady is the largest live heap the
	// collector found during the sync over that steady heap (pitfall 7's
	// spike).
	HeapPerObject  float64 `json:"heap_per_object"`
	PeakOverSteady float64 `json:"peak_over_steady"`
	// With -relists: each relist's time from the library's first request
	// for the list after an injected 410 until every object is applied
	// again, this process's CPU meanwhile, and the peak live heap during
	// it over the live heap before it (medians of the relists).
	RelistSeconds float64 `json:"relist_seconds,omitempty"`
	RelistCPU     float64 `json:"relist_cpu,omitempty"`
	RelistPeak    float64 `json:"relist_peak,omitempty"`
}

// runRelists syncs variant's informer of every object of shape (variant
// is one of scale.RelistKindsOf(shape), which Relists checks), relists it
// times times, and prints the sample, with the request that carried its
// first list.
func runRelists(ctx context.Context, shape, variant string, cfg *rest.Config, n, times int) error {
	total, err := scale.CountObjects(ctx, cfg, shape)
	if err != nil {
		return err
	}
	if total < n { // the apiserver keeps a ConfigMap or two of its own
		return fmt.Errorf("syncpair: the cluster holds %d %s, want at least %d", total, shape, n)
	}
	seen := scale.RequestLog{Resource: shape}
	cfg.Wrap(seen.Wrap)
	runs, _, err := scale.Relists(ctx, cfg, shape, variant, "", total, times)
	if err != nil {
		return err
	}
	request, answer := seen.List()
	if err := checkAnswer(variant, request, answer); err != nil {
		return err
	}
	med := func(of func(scale.RelistSample) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = of(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	s := sample{Variant: variant, Objects: total, Request: request, Answer: answer,
		RelistSeconds: med(func(r scale.RelistSample) float64 { return r.Seconds }),
		RelistCPU:     med(func(r scale.RelistSample) float64 { return r.CPU }),
		RelistPeak:    med(func(r scale.RelistSample) float64 { return r.PeakOverSteady }),
	}
	return json.NewEncoder(os.Stdout).Encode(s)
}

// runChild times one sync of variant's informer of every object of
// shape (or, with relists, its relists), and prints the sample.
func runChild(ctx context.Context, shape, variant, kubeconfig string, n, relists int, profileDir string) error {
	variants := variantsOf(shape)
	if variants == nil {
		return fmt.Errorf("syncpair: no shape %q (have %v)", shape, shapeNames())
	}
	build, ok := variants[variant]
	if kinds := scale.RelistKindsOf(shape); relists > 0 && !slices.Contains(kinds, variant) {
		return fmt.Errorf("syncpair: -relists of %s measures %v, not %q", shape, kinds, variant)
	}
	if !ok && relists == 0 {
		return fmt.Errorf("syncpair: %s have no variant %q (have %v)", shape, variant, variantNames(shape))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0
	if relists > 0 {
		return runRelists(ctx, shape, variant, cfg, n, relists)
	}
	seen := scale.RequestLog{Resource: shape}
	cfg.Wrap(seen.Wrap)
	if profileDir != "" {
		f, err := os.Create(filepath.Join(profileDir, fmt.Sprintf("%s-%d.pprof", variant, time.Now().UnixNano())))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := scale.LiveHeap()
	peak := scale.StartPeakSampler(2 * time.Millisecond)
	start := time.Now()
	synced, count, err := build(ctx, cfg)
	if err != nil {
		return err
	}
	for !synced() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	s := sample{Variant: variant, Seconds: time.Since(start).Seconds(), CPU: selfCPU(), Objects: count()}
	s.Request, s.Answer = seen.List()
	if err := checkAnswer(variant, s.Request, s.Answer); err != nil {
		return err
	}
	peakHeap := peak.Stop() - base
	steady := scale.LiveHeap() - base // the informer still runs and holds its cache
	s.HeapPerObject = steady / float64(s.Objects)
	s.PeakOverSteady = peakHeap / steady
	if s.Objects < n { // the apiserver keeps a ConfigMap or two of its own
		return fmt.Errorf("syncpair: %s synced %d %s, want at least %d", variant, s.Objects, shape, n)
	}
	return json.NewEncoder(os.Stdout).Encode(s)
}

// selfUserCPU is this process's user CPU-seconds so far.
func selfUserCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()) / 1e9
}

// selfCPU is this process's user and system CPU-seconds so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// internConfigMap makes cm share one copy of each string that many
// ConfigMaps repeat: its namespace, its label keys and values, its data
// keys and its owners' apiVersion and kind. unique.Make keeps one
// canonical copy of each; the decoder made one per object.
func internConfigMap(cm *corev1.ConfigMap) {
	cm.Namespace = intern(cm.Namespace)
	cm.Labels = internMap(cm.Labels, true)
	cm.Data = internMap(cm.Data, false)
	for i := range cm.OwnerReferences {
		cm.OwnerReferences[i].APIVersion = intern(cm.OwnerReferences[i].APIVersion)
		cm.OwnerReferences[i].Kind = intern(cm.OwnerReferences[i].Kind)
	}
}

func intern(s string) string { return unique.Make(s).Value() }

// internMap is m with its keys interned, and its values too if values.
func internMap(m map[string]string, values bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}
