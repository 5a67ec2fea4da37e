package sharding_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// The tests' timing, as in leaderelection's tests: every bound is
// computed from these.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
	reconcileTime = 50 * time.Millisecond
	ring          = "orders"
)

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// interval is one reconcile of one key by one member, on this host's clock.
type interval struct {
	member     string
	start, end time.Time
}

// records is what the in-process replicas of one test saw and did.
type records struct {
	mu         sync.Mutex
	reconciles map[informer.Key][]interval
	// vanished are the parents whose relabel reached a member's informer
	// as a delete: what a naive "delete the children when the parent is
	// gone" handler would act on.
	vanished map[informer.Key]string
}

func newRecords() *records {
	return &records{reconciles: map[informer.Key][]interval{}, vanished: map[informer.Key]string{}}
}

// runReplica runs one member of the ring until ctx ends. Its controller
// keeps a child ConfigMap for every parent (role=parent) it owns.
func runReplica(ctx context.Context, t *testing.T, cfg *rest.Config, ns, name string, rec *records) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	member, err := sharding.NewMember(sharding.MemberConfig{
		Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: name,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Logger: testLogger,
		Run: func(ctx context.Context, shard sharding.Shard) {
			factory := must(si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme}))
			cms := must(si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns), si.WithLabels(shard.Selector())))
			client := must(factory.RESTClient(corev1.SchemeGroupVersion))
			queue := workqueue.New(workqueue.Options[informer.Key]{})
			defer queue.ShutDown()
			must(cms.AddEventHandler(si.EnqueueOwner[*corev1.ConfigMap](queue, corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind())))
			must(cms.AddEventHandler(si.Filtered(si.EnqueueKey[*corev1.ConfigMap](queue), si.MatchingLabels[*corev1.ConfigMap](labels.SelectorFromSet(labels.Set{"role": "parent"})))))
			must(cms.AddEventHandler(si.HandlerFuncs[*corev1.ConfigMap]{DeleteFunc: func(cm *corev1.ConfigMap, _ bool) {
				if cm.Labels["role"] == "parent" {
					rec.mu.Lock()
					rec.vanished[informer.KeyFor(cm)] = shard.Member
					rec.mu.Unlock()
				}
			}}))
			factory.Start(ctx)
			defer factory.Wait()
			if factory.WaitForCacheSync(ctx) != nil {
				return
			}
			reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				start := time.Now()
				defer func() {
					rec.mu.Lock()
					rec.reconciles[key] = append(rec.reconciles[key], interval{shard.Member, start, time.Now()})
					rec.mu.Unlock()
				}()
				parent := must(cms.Lister().Namespace(key.Namespace).Get(key.Name)) // Reconciler checked it is ours
				if parent.Labels["role"] != "parent" {
					return workqueue.Result{}, nil // a child's own key: only to acknowledge a drain
				}
				time.Sleep(reconcileTime)
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name + "-child", Namespace: key.Namespace,
					Labels:          map[string]string{"role": "child"},
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
				err := client.Post().Namespace(key.Namespace).Resource("configmaps").Body(child).Do(ctx).Error()
				return workqueue.Result{}, ignoreAlreadyExists(err)
			}
			workqueue.Run(ctx, queue, sharding.Reconciler(shard, cms.Lister(), client, "configmaps", reconcile),
				workqueue.RunOptions[informer.Key]{Workers: 4})
		},
	})
	require.NoError(t, err)
	require.NoError(t, member.Run(ctx))
}

func ignoreAlreadyExists(err error) error {
	if err != nil && isAlreadyExists(err) {
		return nil
	}
	return err
}

// createParents creates n parent ConfigMaps, unlabelled.
func createParents(ctx context.Context, t *testing.T, core *rest.RESTClient, ns string, n int) {
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("order-%03d", i), Namespace: ns,
			Labels: map[string]string{"role": "parent"}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error())
	}
}

// listConfigMaps lists the namespace's ConfigMaps from the API server.
func listConfigMaps(ctx context.Context, t *testing.T, core *rest.RESTClient, ns string) []corev1.ConfigMap {
	list := &corev1.ConfigMapList{}
	require.NoError(t, core.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list))
	var out []corev1.ConfigMap
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out = append(out, cm)
		}
	}
	return out
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// aliveMembers returns the holders of the ring's shard Leases, sorted.
func aliveMembers(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) []string {
	list := &coordinationv1.LeaseList{}
	require.NoError(t, must(leaderelection.NewClient(cfg)).Get().Namespace(ns).Resource("leases").
		Param("labelSelector", sharding.LeaseRingLabel+"="+ring).Do(ctx).Into(list))
	var out []string
	for _, l := range list.Items {
		if h := l.Spec.HolderIdentity; h != nil && *h == l.Labels[sharding.LeaseMemberLabel] {
			out = append(out, *h)
		}
	}
	slices.Sort(out)
	return out
}

// converged reports whether every ConfigMap is labelled with its owner on
// the ring of members and none is draining; it returns the owners.
func converged(cms []corev1.ConfigMap, members []string) (map[informer.Key]string, bool) {
	r := must(sharding.NewRing(members, 0))
	shard := sharding.Shard{Ring: ring}
	owners := map[informer.Key]string{}
	for _, cm := range cms {
		if cm.Labels[shard.Label()] != r.Owner(sharding.RingKey(&cm)) || cm.Labels[shard.DrainLabel()] != "" {
			return nil, false
		}
		owners[informer.KeyFor(&cm)] = cm.Labels[shard.Label()]
	}
	return owners, true
}

// requireNoOverlap fails unless, for every key, each reconcile by one
// member ended before any other member's next one began.
func requireNoOverlap(t *testing.T, rec *records) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for key, all := range rec.reconciles {
		sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
		for i := 1; i < len(all); i++ {
			prev, next := all[i-1], all[i]
			require.False(t, next.member != prev.member && next.start.Before(prev.end),
				"%s: %s began at %v, before %s's reconcile ended at %v", key, next.member, next.start, prev.member, prev.end)
		}
	}
}

var testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// fast is cfg with room for a burst of writes: client-go's default QPS
// (5) would make every measurement here a measurement of that limit.
func fast(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// leaseNames lists the names of the namespace's Leases.
func leaseNames(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) []string {
	list := &coordinationv1.LeaseList{}
	require.NoError(t, must(leaderelection.NewClient(cfg)).Get().Namespace(ns).Resource("leases").Do(ctx).Into(list))
	var out []string
	for _, l := range list.Items {
		out = append(out, l.Name)
	}
	return out
}

// startMembers starts one member of the test ring per name, with the
// tests' timing, each running run in every term until ctx ends (nil: an
// idle member), and returns the members' ids, sorted, once each has
// begun a term.
func startMembers(ctx context.Context, t *testing.T, wg *sync.WaitGroup, cfg *rest.Config, ns string, names []string, run func(ctx context.Context, shard sharding.Shard)) []string {
	t.Helper()
	terms := make(chan string, len(names))
	for _, name := range names {
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: name,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, shard sharding.Shard) {
				select {
				case terms <- shard.Member:
				default: // a later term, once the test has its ids
				}
				if run == nil {
					<-ctx.Done()
					return
				}
				run(ctx, shard)
			},
		}))
		wg.Go(func() { member.Run(ctx) })
	}
	ids := make([]string, len(names))
	for i := range ids {
		ids[i] = receive(t, terms, time.Minute) // against hanging, not a timing
	}
	slices.Sort(ids)
	return ids
}
