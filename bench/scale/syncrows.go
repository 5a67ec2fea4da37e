package scale

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
)

// The workloads of the sync rows.
const (
	InitialSync   = "initial sync"
	HeapPerObject = "heap per object"
	ServerCPU     = "apiserver CPU per sync"
	// InformerCPU is the CPU of the sync's own process from start to
	// synced: the informer's, since nothing else runs in it meanwhile.
	InformerCPU = "informer process CPU per sync"
	ServerRSS   = "apiserver peak RSS per sync"
)

// syncSample is what one timed initial sync measured.
type syncSample struct {
	seconds       float64
	cpu           float64 // this process's CPU-seconds meanwhile
	heapPerObject float64
}

// syncOnce builds, starts and syncs one informer, and measures it: the
// time from start to synced, this process's CPU meanwhile, and the live
// heap it added per object (after a forced GC, the informer still
// running).
func syncOnce(ctx context.Context, build func() (running, error), n int) (syncSample, error) {
	r, err := build()
	if err != nil {
		return syncSample{}, err
	}
	base := LiveHeap()
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
	heap := LiveHeap()
	return syncSample{seconds: elapsed, cpu: cpu - cpu0, heapPerObject: (heap - base) / float64(n)}, nil
}

// syncPair runs ours and client-go once each, each in a process of its
// own (cfg.SyncChild), in the order oursFirst says (alternated by the
// caller, so neither always runs on a warmer server), and adds the
// samples to res as the row of n objects: with the apiserver's CPU and
// peak RSS during each, the request each library made, and the load
// other processes put on the machine meanwhile. job says what to sync.
func syncPair(ctx context.Context, cfg Config, res *Results, job SyncJob, n int, label string, oursFirst bool, meter *serverMeter, foreign *foreignMeter) error {
	order := []string{Ours, ClientGo}
	if !oursFirst {
		order = []string{ClientGo, Ours}
	}
	got := map[string]SyncSample{}
	server := map[string]serverUsage{}
	if err := foreign.begin(); err != nil {
		return err
	}
	for _, lib := range order {
		job.Library = lib
		if err := meter.start(); err != nil {
			return err
		}
		sample, err := cfg.SyncChild(ctx, job)
		if err != nil {
			return fmt.Errorf("%s, %s, %s at %d (%s): %w", lib, InitialSync, job.Shape, n, label, err)
		}
		if server[lib], err = meter.stop(); err != nil {
			return err
		}
		got[lib] = sample
		res.noteRequest(ListRequest{Shape: job.Shape, Variant: label, Library: lib, Request: sample.Request, Answer: sample.Answer})
	}
	others, err := foreign.end()
	if err != nil {
		return err
	}
	o, c := got[Ours], got[ClientGo]
	proto := func(workload, unit string) Row {
		return Row{Workload: workload, Shape: job.Shape, N: n, Variant: label, Unit: unit}
	}
	res.add(proto(InitialSync, "s"), o.Seconds, c.Seconds)
	res.addForeign(proto(InitialSync, "s"), others)
	res.add(proto(InformerCPU, "CPU-s"), o.CPU, c.CPU)
	res.add(proto(HeapPerObject, "B/object"), o.HeapPerObject, c.HeapPerObject)
	res.add(proto(ServerCPU, "CPU-s"), server[Ours].CPUSeconds, server[ClientGo].CPUSeconds)
	res.add(proto(ServerRSS, "MiB"), server[Ours].PeakRSS/(1<<20), server[ClientGo].PeakRSS/(1<<20))
	return nil
}

// floorOnce is the raw-bytes floor: one unpaged GET of the whole
// collection of shape, n objects in every namespace, in the cheapest
// encoding the shape has (encodingOf: protobuf, JSON for Widgets), read
// to the end and not decoded.
func floorOnce(ctx context.Context, cfg *rest.Config, shape string, n int) (float64, error) {
	t0 := time.Now()
	body, err := RawList(ctx, cfg, shape)
	if err != nil {
		return 0, err
	}
	if len(body) < n*100 {
		return 0, fmt.Errorf("scale: the raw list of %d %s is only %d bytes", n, shape, len(body))
	}
	return time.Since(t0).Seconds(), nil
}

// RawList reads the whole collection of shape in one unpaged GET, in the
// encoding floorOnce uses, to the end, and returns it undecoded: what
// every informer's initial sync must at least do.
func RawList(ctx context.Context, cfg *rest.Config, shape string) ([]byte, error) {
	client, err := clientFor(cfg, shape)
	if err != nil {
		return nil, err
	}
	body, err := client.Get().AbsPath(collectionPath(shape)).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scale: the raw list of %s: %w", shape, err)
	}
	return body, nil
}
