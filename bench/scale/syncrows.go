package scale

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
)

// The workloads of the sync rows.
const (
	InitialSync   = "initial sync"
	HeapPerObject = "heap per object"
	ServerCPU     = "apiserver CPU per sync"
	// InformerCPU is this process's CPU from start to synced: the
	// informer's, since nothing else runs in the ladder meanwhile.
	InformerCPU = "informer process CPU per sync"
	ServerRSS   = "apiserver peak RSS per sync"
)

// syncSample is what one timed initial sync measured.
type syncSample struct {
	seconds       float64
	cpu           float64 // this process's CPU-seconds meanwhile
	heapPerObject float64
	server        serverUsage
}

// syncOnce builds, starts and syncs one informer, and measures it: the
// time from start to synced, the live heap it added per object (after a
// forced GC, the informer still running), and, unless meter is nil, the
// apiserver's CPU time and peak RSS meanwhile.
func syncOnce(ctx context.Context, build func() (running, error), n int, meter *serverMeter) (syncSample, error) {
	r, err := build()
	if err != nil {
		return syncSample{}, err
	}
	base := LiveHeap()
	if meter != nil {
		if err := meter.start(); err != nil {
			return syncSample{}, err
		}
	}
	cpu0, err := cpuSeconds(os.Getpid())
	if err != nil {
		return syncSample{}, err
	}
	t0 := time.Now()
	r.start()
	defer r.stop()
	if err := r.waitSynced(ctx, n); err != nil {
		return syncSample{}, err
	}
	elapsed := time.Since(t0).Seconds()
	cpu, err := cpuSeconds(os.Getpid())
	if err != nil {
		return syncSample{}, err
	}
	var usage serverUsage
	if meter != nil {
		if usage, err = meter.stop(); err != nil {
			return syncSample{}, err
		}
	}
	heap := LiveHeap()
	return syncSample{seconds: elapsed, cpu: cpu - cpu0, heapPerObject: (heap - base) / float64(n), server: usage}, nil
}

// syncPair runs ours and client-go once each, in the order first says
// (alternated by the caller, so neither always runs on a warmer server),
// and adds the samples to res as the row of n objects, with the load
// other processes put on the machine meanwhile. Each informer lists
// every namespace, where the control plane holds total objects of s.
func syncPair[T informer.Object](ctx context.Context, res *Results, cfg *rest.Config, s shape[T], n, total int, v Variant, label string, oursFirst bool, meter *serverMeter, foreign *foreignMeter) error {
	runs := map[string]func() (running, error){
		Ours:     func() (running, error) { return buildOurs(ctx, cfg, s, metav1.NamespaceAll, v, nil) },
		ClientGo: func() (running, error) { return buildClientGo(ctx, cfg, s, metav1.NamespaceAll, v, nil) },
	}
	order := []string{Ours, ClientGo}
	if !oursFirst {
		order = []string{ClientGo, Ours}
	}
	got := map[string]syncSample{}
	if err := foreign.begin(); err != nil {
		return err
	}
	for _, lib := range order {
		sample, err := syncOnce(ctx, runs[lib], total, meter)
		if err != nil {
			return fmt.Errorf("%s, %s, %s at %d (%s): %w", lib, InitialSync, s.resource, n, label, err)
		}
		got[lib] = sample
	}
	others, err := foreign.end()
	if err != nil {
		return err
	}
	o, c := got[Ours], got[ClientGo]
	proto := func(workload, unit string) Row {
		return Row{Workload: workload, Shape: s.resource, N: n, Variant: label, Unit: unit}
	}
	res.add(proto(InitialSync, "s"), o.seconds, c.seconds)
	res.addForeign(proto(InitialSync, "s"), others)
	res.add(proto(InformerCPU, "CPU-s"), o.cpu, c.cpu)
	res.add(proto(HeapPerObject, "B/object"), o.heapPerObject, c.heapPerObject)
	res.add(proto(ServerCPU, "CPU-s"), o.server.CPUSeconds, c.server.CPUSeconds)
	res.add(proto(ServerRSS, "MiB"), o.server.PeakRSS/(1<<20), c.server.PeakRSS/(1<<20))
	return nil
}

// floorOnce is the raw-bytes floor: one GET of the whole collection, n
// objects in every namespace, in protobuf (the cheapest encoding), read
// to the end and not decoded.
func floorOnce(ctx context.Context, cfg *rest.Config, resource string, n int) (float64, error) {
	client, err := coreClient(cfg, true)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	body, err := client.Get().Resource(resource).DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	if len(body) < n*100 {
		return 0, fmt.Errorf("scale: the raw list of %d %s is only %d bytes", n, resource, len(body))
	}
	return time.Since(t0).Seconds(), nil
}
