package scale

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// Config says what one run of the ladder measures.
type Config struct {
	// Sizes are the object counts served by the control plane: 1k, 10k,
	// 100k for the full ladder.
	Sizes []int
	// Count is the number of interleaved pairs per row (≥ 10 for a row
	// to be judged; 1 only proves the code runs).
	Count int
	// RelistCount is the number of relist pairs per size.
	RelistCount int
	// BoundedRelists is how many relists in a row the memory check runs
	// at the largest size (0: none).
	BoundedRelists int
	// InProcessSizes and InProcessCount are the in-process syncs, each
	// in its own process (Child); 1M is only reached here.
	InProcessSizes []int
	InProcessCount int
	// StoreSizes and StoreRun are the store rows' sizes and the length of
	// each run.
	StoreSizes []int
	StoreRun   time.Duration
	// PodSizes are the sizes at which Pods are measured too.
	PodSizes []int
	// WidgetSizes are the sizes at which Widgets, a custom resource, are
	// measured too: every variant of VariantsOf(Widgets), and the floor.
	WidgetSizes []int
	// WatchCacheOff also runs the Defaults sync rows against an apiserver
	// without its watch cache (every LIST and WATCH served by etcd).
	WatchCacheOff bool
	// CacheDir keeps the populated etcd between runs ("": none).
	CacheDir string
	// Child runs one in-process sync in a process of its own.
	Child func(ctx context.Context, lib string, n int) (InProcessSample, error)
	// SyncChild runs one initial sync against a control plane, in a
	// process of its own (bench/cmd/scale runs itself with -sync), so
	// that every sample starts with an empty heap, as a controller
	// does; RunSync runs it in this process instead. Required.
	SyncChild func(ctx context.Context, job SyncJob) (SyncSample, error)
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Quick is the ladder for iterating: up to 10k, three pairs per row.
func Quick() Config {
	return Config{
		Sizes: []int{1000, 10_000}, Count: 3, RelistCount: 3,
		InProcessSizes: []int{1000, 10_000}, InProcessCount: 3,
		StoreSizes: []int{1000, 10_000}, StoreRun: 300 * time.Millisecond,
		PodSizes: []int{1000, 10_000}, WidgetSizes: []int{1000, 10_000},
	}
}

// Full is the whole ladder: 1k to 100k against the control plane, up to
// 1M in-process, ten pairs per row (three for relists and 1M).
func Full() Config {
	return Config{
		Sizes: []int{1000, 10_000, 100_000}, Count: 10, RelistCount: 3, BoundedRelists: 10,
		InProcessSizes: []int{1000, 10_000, 100_000, 1_000_000}, InProcessCount: 3,
		StoreSizes: []int{1000, 10_000, 100_000}, StoreRun: time.Second,
		PodSizes: []int{1000, 10_000, 100_000}, WidgetSizes: []int{1000, 10_000, 100_000},
		WatchCacheOff: true,
	}
}

// Run measures the ladder.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Count < 1 || len(cfg.Sizes) == 0 {
		return nil, fmt.Errorf("scale: Config needs Count ≥ 1 and at least one size (got %d and %v)", cfg.Count, cfg.Sizes)
	}
	if cfg.SyncChild == nil {
		return nil, fmt.Errorf("scale: Config.SyncChild is nil (RunSync runs each sync in this process)")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	res := &Results{Config: cfg}
	if err := runServed(ctx, cfg, res); err != nil {
		return nil, err
	}
	if err := runStore(cfg, res); err != nil {
		return nil, err
	}
	if err := runInProcess(ctx, cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

// runServed runs every row served by a control plane, size by size.
func runServed(ctx context.Context, cfg Config, res *Results) error {
	for _, n := range cfg.Sizes {
		if err := servedAt(ctx, cfg, res, n); err != nil {
			return err
		}
	}
	return nil
}

// servedAt runs the rows served at n: on a control plane with the watch
// cache on, then (WatchCacheOff) on one without, both on copies of the
// etcd populated for n.
func servedAt(ctx context.Context, cfg Config, res *Results, n int) error {
	data, cleanup, err := populatedData(ctx, cfg.CacheDir, shapes(cfg, n), n, cfg.Logf)
	defer cleanup()
	if err != nil {
		return err
	}
	for _, cacheOff := range []bool{false, true} {
		if cacheOff && !cfg.WatchCacheOff {
			break
		}
		cp, err := testenv.Start(ctx, testenv.Options{EtcdDataFrom: data, DisableWatchCache: cacheOff})
		if err != nil {
			return err
		}
		err = servedRows(ctx, cfg, res, cp, n, cacheOff)
		cp.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

// watchCacheOff labels the rows measured without the watch cache.
const watchCacheOff = ", watch cache off"

// servedRows runs the rows served by cp at n. Every informer lists every
// namespace, as each library's factory does by default: cp holds n
// objects of each shape, and the few ConfigMaps the apiserver keeps of
// its own (count says how many in all).
func servedRows(ctx context.Context, cfg Config, res *Results, cp *testenv.ControlPlane, n int, cacheOff bool) error {
	rc := unlimited(cp.Config())
	meter := newServerMeter(apiserverPID(cp))
	foreign := newForeignMeter(cp.PIDs())
	count := map[string]int{}
	for _, shape := range shapes(cfg, n) {
		if shape == Widgets {
			// The CRD came with the saved etcd; the apiserver serves it
			// a moment after it starts.
			if err := testenv.WaitForCRD(ctx, rc, widgetsCRD); err != nil {
				return err
			}
		}
		total, err := CountObjects(ctx, rc, shape)
		if err != nil {
			return err
		}
		if total < n {
			return fmt.Errorf("scale: the control plane at %s holds %d %s", Count(n), total, shape)
		}
		count[shape] = total
	}
	variants := []Variant{Defaults, StreamJSON, ListJSON, Stripped, MetadataOnly}
	podVariants := []Variant{Defaults, StreamJSON, Stripped}
	if n >= 100_000 {
		// A Pod streamed in JSON takes ~20 s at 100k: the row that shows
		// the encoding's cost is measured at the smaller sizes.
		podVariants = []Variant{Defaults, Stripped}
	}
	suffix := ""
	if cacheOff {
		variants, podVariants, suffix = []Variant{Defaults}, nil, watchCacheOff
	}
	for _, v := range variants {
		cfg.Logf("sync %s at %s: %s%s", ConfigMaps, Count(n), v, suffix)
		for i := range cfg.Count {
			if err := syncPair(ctx, cfg, res, SyncJob{Kubeconfig: cp.KubeconfigPath(), Shape: ConfigMaps, Variant: v, Objects: count[ConfigMaps]}, n, string(v)+suffix, i%2 == 0, meter, foreign); err != nil {
				return err
			}
		}
	}
	if slices.Contains(cfg.PodSizes, n) {
		for _, v := range podVariants {
			cfg.Logf("sync %s at %s: %s", Pods, Count(n), v)
			for i := range cfg.Count {
				if err := syncPair(ctx, cfg, res, SyncJob{Kubeconfig: cp.KubeconfigPath(), Shape: Pods, Variant: v, Objects: count[Pods]}, n, string(v), i%2 == 0, meter, foreign); err != nil {
					return err
				}
			}
		}
	}
	if slices.Contains(cfg.WidgetSizes, n) && !cacheOff {
		for _, v := range VariantsOf(Widgets) {
			cfg.Logf("sync %s at %s: %s", Widgets, Count(n), v)
			for i := range cfg.Count {
				if err := syncPair(ctx, cfg, res, SyncJob{Kubeconfig: cp.KubeconfigPath(), Shape: Widgets, Variant: v, Objects: count[Widgets]}, n, string(v), i%2 == 0, meter, foreign); err != nil {
					return err
				}
			}
		}
	}
	if cacheOff {
		return nil
	}
	if err := floorRows(ctx, cfg, res, rc, n, count); err != nil {
		return err
	}
	return relistRows(ctx, cfg, res, rc, n, count[ConfigMaps])
}

// floorRows measures the raw-bytes floor of each shape at n, where the
// control plane holds count[shape] objects of it.
func floorRows(ctx context.Context, cfg Config, res *Results, rc *rest.Config, n int, count map[string]int) error {
	cfg.Logf("raw-bytes floor at %s", Count(n))
	for _, shape := range shapes(cfg, n) {
		f := Floor{Shape: shape, N: n, Encoding: encodingOf(shape)}
		for range cfg.Count {
			s, err := floorOnce(ctx, rc, shape, count[shape])
			if err != nil {
				return err
			}
			f.Seconds = append(f.Seconds, s)
		}
		res.Floors = append(res.Floors, f)
	}
	return nil
}

// shapes are the shapes measured at n: ConfigMaps always, Pods and
// Widgets at their sizes.
func shapes(cfg Config, n int) []string {
	out := []string{ConfigMaps}
	if slices.Contains(cfg.PodSizes, n) {
		out = append(out, Pods)
	}
	if slices.Contains(cfg.WidgetSizes, n) {
		out = append(out, Widgets)
	}
	return out
}
