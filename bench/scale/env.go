package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// populationVersion names the objects' shapes and layout in the saved
// etcd data: a change to ConfigMap, Pod, Widget, the CRD of Widget or
// where they live must change it, so stale data is never used.
const populationVersion = "v3" // v2: random data; v3: ten namespaces, one etcd per size

// spread is how many namespaces a size's objects are spread over: the
// i-th object lives in ns-(i mod spread), as ConfigMap, Pod and
// NewWidget place it.
const spread = 10

// Count formats 1000 as 1k and 1000000 as 1M.
func Count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// DefaultCacheDir is where each size's populated etcd is kept between
// runs (Config.CacheDir): listwatch-informer/scale under the user's cache
// directory ($XDG_CACHE_HOME or ~/.cache on Linux). `make scale` and the
// ladder's test share it, so a warm `make test` starts its control planes
// on the saved 1k data instead of creating 2,000 objects first.
func DefaultCacheDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("scale: no cache directory for the populated etcd: %w", err)
	}
	return filepath.Join(cache, "listwatch-informer", "scale"), nil
}

// populatedData returns the directory of a saved etcd that holds n
// objects of every shape in shapes, and nothing else of ours, making it
// first if the cache has none: a control plane is started, populated and
// saved. Each size has an etcd of its own, so that an informer of every
// namespace, as each library builds one by default, lists exactly the
// size measured. cacheDir "" means no cache: the data is made in a
// temporary directory, removed by cleanup.
func populatedData(ctx context.Context, cacheDir string, shapes []string, n int, logf func(string, ...any)) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	name := fmt.Sprintf("etcd-%s-%s-%s", populationVersion, strings.Join(shapes, "+"), Count(n))
	if cacheDir == "" {
		tmp, err := os.MkdirTemp("", "scale-etcd-")
		if err != nil {
			return "", cleanup, err
		}
		cacheDir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	dir = filepath.Join(cacheDir, name)
	if _, err := os.Stat(dir); err == nil {
		logf("reusing the populated etcd in %s", dir)
		return dir, cleanup, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", cleanup, err
	}
	logf("populating etcd (%s at %s), once: later runs reuse %s", strings.Join(shapes, ", "), Count(n), dir)
	cp, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		return "", cleanup, err
	}
	defer cp.Stop()
	if err := createNamespaces(ctx, cp.Config()); err != nil {
		return "", cleanup, err
	}
	for _, shape := range shapes {
		if err := populate(ctx, cp.Config(), shape, n); err != nil {
			return "", cleanup, err
		}
		logf("  %d %s created in %d namespaces", n, shape, spread)
	}
	// Saved under a temporary name and renamed: an interrupted save never
	// leaves a directory that looks complete.
	partial := dir + ".partial"
	os.RemoveAll(partial)
	if err := cp.SaveEtcdData(ctx, partial); err != nil {
		return "", cleanup, err
	}
	return dir, cleanup, os.Rename(partial, dir)
}

func joinCounts(sizes []int) string {
	parts := make([]string, len(sizes))
	for i, n := range sizes {
		parts[i] = Count(n)
	}
	return strings.Join(parts, "+")
}

// createNamespaces creates the namespaces ns-0 … ns-9 the objects live
// in; one that exists already is left as it is.
func createNamespaces(ctx context.Context, cfg *rest.Config) error {
	client, err := coreClient(cfg, true)
	if err != nil {
		return err
	}
	for i := range spread {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(i)}}
		if err := client.Post().Resource("namespaces").Body(ns).Do(ctx).Error(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("scale: creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

// Populate creates the namespaces ns-0 … ns-9, unless they exist, and n
// objects of shape spread over them (populate): for Widgets, first the
// CRD, served before the first object is sent. It is how syncpair fills
// a control plane with Widgets the ladder's way.
func Populate(ctx context.Context, cfg *rest.Config, shape string, n int) error {
	if err := createNamespaces(ctx, cfg); err != nil {
		return err
	}
	return populate(ctx, cfg, shape, n)
}

// populate creates n objects of shape, the i-th in namespace
// ns-(i mod 10), 16 requests at a time, in the shape's cheapest encoding
// (protobuf; JSON for Widgets). Widgets need their CRD: it is installed
// first, and populate returns its error if the CRD is not served.
func populate(ctx context.Context, cfg *rest.Config, shape string, n int) error {
	if _, err := object(shape, 0); err != nil {
		return err
	}
	if shape == Widgets {
		if err := testenv.InstallCRD(ctx, cfg, widgetsCRD); err != nil {
			return err
		}
	}
	client, err := clientFor(unlimited(cfg), shape)
	if err != nil {
		return err
	}
	return InParallel(n, func(i int) error {
		obj, err := object(shape, i)
		if err != nil {
			return err
		}
		if err := client.Post().Namespace(namespaceOf(i)).Resource(shape).Body(obj).Do(ctx).Error(); err != nil {
			return fmt.Errorf("scale: creating %s %d: %w", shape, i, err)
		}
		return nil
	})
}

// object is the i-th object of shape: ConfigMap(i), Pod(i) or
// NewWidget(i).
func object(shape string, i int) (runtime.Object, error) {
	switch shape {
	case ConfigMaps:
		return ConfigMap(i), nil
	case Pods:
		return Pod(i), nil
	case Widgets:
		return NewWidget(i), nil
	}
	return nil, checkShape(shape)
}

// InParallel calls create(i) for every i below n, 16 at a time: how the
// ladder and syncpair fill a control plane with objects. A worker whose
// create fails stops; the errors are joined.
func InParallel(n int, create func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := create(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unlimited returns cfg with client-side rate limiting off, so that only
// the libraries differ, not how long each waited for a token.
func unlimited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// apiserverPID is kube-apiserver's process ID (PIDs lists etcd first).
func apiserverPID(cp *testenv.ControlPlane) int {
	pids := cp.PIDs()
	return pids[len(pids)-1]
}
