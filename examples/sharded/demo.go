package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/sharding"
)

// demo prepares the objects, starts the fleet and runs the scenario.
func demo(ctx context.Context, s settings, out io.Writer) error {
	cfg, err := s.conn.Load()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(s.qps), int(2*s.qps)
	core, err := cli.CoreV1(cfg)
	if err != nil {
		return err
	}
	ns := s.conn.Namespace
	if err := cli.EnsureNamespace(ctx, core, ns); err != nil {
		return err
	}
	began := time.Now()
	if err := createObjects(ctx, core, ns, s.objects); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d ConfigMaps in %s, unlabelled, before any replica or sharder runs (%v)\n", s.objects, ns, time.Since(began).Round(time.Millisecond))

	f := &fleet{cfg: cfg, base: replicaConfig{
		Kubeconfig: s.conn.Path, Context: s.conn.Context, Namespace: ns,
		Reconcile: s.reconcile, Workers: s.workers, Lease: s.lease, Renew: s.renew, Retry: s.retry, QPS: s.qps,
	}}
	defer f.stop()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if s.updateRate > 0 {
		wg.Go(func() { update(ctx, core, ns, s.objects, s.updateRate) })
	}
	if s.scenario == "steady" {
		return steady(ctx, s, f, api{core, ns}, out)
	}
	return handovers(ctx, s, f, api{core, ns}, out)
}

// objectName is the name of ConfigMap i.
func objectName(i int) string { return fmt.Sprintf("obj-%05d", i) }

// createObjects creates ConfigMaps obj-00000... that are missing, 16 at
// a time, and strips the shard labels of any left by an earlier run.
func createObjects(ctx context.Context, core *rest.RESTClient, ns string, n int) error {
	shard := sharding.Shard{Ring: ring}
	unlabel := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null,%q:null}}}`, shard.Label(), shard.DrainLabel())
	errs := make(chan error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: objectName(i), Namespace: ns,
					Labels: map[string]string{"app": "sharded"}}, Data: map[string]string{"tick": "0"}}
				err := core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error()
				if apierrors.IsAlreadyExists(err) {
					err = core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(objectName(i)).Body(unlabel).Do(ctx).Error()
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// update changes data.tick of a random object rate times a second until
// ctx ends: the load that keeps the replicas reconciling. Each PATCH runs
// on its own goroutine, so a slow answer does not slow the rate.
func update(ctx context.Context, core *rest.RESTClient, ns string, n int, rate float64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		body := fmt.Appendf(nil, `{"data":{"tick":"%d"}}`, i)
		wg.Go(func() {
			core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(objectName(rand.IntN(n))).Body(body).Do(ctx)
		})
	}
}

// api reads the sharded objects as they are in the API server.
type api struct {
	core *rest.RESTClient
	ns   string
}

// owners lists the objects and returns each one's shard label, and
// whether any is draining.
func (a api) owners(ctx context.Context) (map[informer.Key]string, bool, error) {
	list := &corev1.ConfigMapList{}
	if err := a.core.Get().Namespace(a.ns).Resource("configmaps").Param("labelSelector", "app=sharded").Do(ctx).Into(list); err != nil {
		return nil, false, err
	}
	shard := sharding.Shard{Ring: ring}
	out := make(map[informer.Key]string, len(list.Items))
	draining := false
	for i := range list.Items {
		cm := &list.Items[i]
		out[informer.KeyFor(cm)] = cm.Labels[shard.Label()]
		draining = draining || cm.Labels[shard.DrainLabel()] != ""
	}
	return out, draining, nil
}
