package scale

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// relistRows measures RelistCount relists of each library at n, each pair
// on fresh informers of every namespace, where the control plane holds
// total ConfigMaps, and at the largest size the bounded-memory check.
func relistRows(ctx context.Context, cfg Config, res *Results, rc *rest.Config, n, total int) error {
	cfg.Logf("relist at %s", Count(n))
	peaks := RelistPeak{N: n}
	for i := range cfg.RelistCount {
		order := []string{Ours, ClientGo}
		if i%2 == 1 {
			order = []string{ClientGo, Ours}
		}
		got := map[string]RelistSample{}
		for _, lib := range order {
			s, _, err := relistRuns(ctx, rc, ConfigMaps, lib, metav1.NamespaceAll, total, 1)
			if err != nil {
				return err
			}
			got[lib] = s[0]
		}
		res.add(Row{Workload: Relist, Shape: ConfigMaps, N: n, Variant: "defaults", Unit: "s"}, got[Ours].Seconds, got[ClientGo].Seconds)
		peaks.Ours = append(peaks.Ours, got[Ours].PeakOverSteady)
		peaks.ClientGo = append(peaks.ClientGo, got[ClientGo].PeakOverSteady)
	}
	res.Relists = append(res.Relists, peaks)
	if cfg.BoundedRelists > 0 && n == cfg.Sizes[len(cfg.Sizes)-1] {
		cfg.Logf("%d relists in a row at %s", cfg.BoundedRelists, Count(n))
		_, growth, err := relistRuns(ctx, rc, ConfigMaps, Ours, metav1.NamespaceAll, total, cfg.BoundedRelists)
		if err != nil {
			return err
		}
		res.Bounded = &BoundedCheck{N: n, Growth: growth}
	}
	return nil
}

// runStore measures the store rows, in this process.
func runStore(cfg Config, res *Results) error {
	for _, n := range cfg.StoreSizes {
		objs, newer := storeObjects(n)
		for _, readers := range []int{0, 1, 10} {
			cfg.Logf("store at %s, %d readers", Count(n), readers)
			variant := "readers=" + strconv.Itoa(readers)
			for i := range cfg.Count {
				order := []string{Ours, ClientGo}
				if i%2 == 1 {
					order = []string{ClientGo, Ours}
				}
				writes, reads := map[string]float64{}, map[string]float64{}
				for _, lib := range order {
					build := oursStore
					if lib == ClientGo {
						build = clientGoStore
					}
					s, err := build(objs)
					if err != nil {
						return err
					}
					LiveHeap() // the previous run's cache is garbage: collect it first
					if writes[lib], reads[lib], err = storeRun(s, newer, readers, cfg.StoreRun); err != nil {
						return fmt.Errorf("%s, store at %d, %d readers: %w", lib, n, readers, err)
					}
				}
				res.add(Row{Workload: StoreWrites, Shape: ConfigMaps, N: n, Variant: variant, Unit: "writes/s", HigherIsBetter: true}, writes[Ours], writes[ClientGo])
				if readers > 0 {
					res.add(Row{Workload: StoreReads, Shape: ConfigMaps, N: n, Variant: variant, Unit: "reads/s", HigherIsBetter: true}, reads[Ours], reads[ClientGo])
				}
			}
		}
	}
	return nil
}

// runInProcess runs the in-process syncs, each in a child process,
// alternating which library goes first.
func runInProcess(ctx context.Context, cfg Config, res *Results) error {
	if cfg.Child == nil {
		return nil
	}
	for _, n := range cfg.InProcessSizes {
		cfg.Logf("in-process sync at %s", Count(n))
		count := cfg.Count
		if n >= 1_000_000 {
			count = cfg.InProcessCount
		}
		for i := range count {
			order := []string{Ours, ClientGo}
			if i%2 == 1 {
				order = []string{ClientGo, Ours}
			}
			got := map[string]InProcessSample{}
			for _, lib := range order {
				s, err := cfg.Child(ctx, lib, n)
				if err != nil {
					return fmt.Errorf("%s, in-process sync at %d: %w", lib, n, err)
				}
				got[lib] = s
			}
			res.add(Row{Workload: InProcessSync, Shape: ConfigMaps, N: n, Variant: "paged protobuf", Unit: "s"}, got[Ours].Seconds, got[ClientGo].Seconds)
			res.add(Row{Workload: InProcessSync + ", heap", Shape: ConfigMaps, N: n, Variant: "paged protobuf", Unit: "B/object"}, got[Ours].HeapPerObject, got[ClientGo].HeapPerObject)
		}
	}
	return nil
}
