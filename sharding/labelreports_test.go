package sharding_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// labelStep is one thing the sharder did to a key, as OnLabel reports
// it: action ("assign", "move", "drain", "undrain") toward member ("" for
// an undrain).
type labelStep struct{ action, member string }

// labelReport is a labelStep and when OnLabel reported it.
type labelReport struct {
	labelStep
	at time.Time
}

// startSharderReportingLabelsOf is startSharder whose OnLabel reports on
// the returned channel every label step of the key named name, in the
// order the sharder took them. None is dropped: when the test has not
// read 16 of them yet, the sharder waits until it does (or ctx ends).
func startSharderReportingLabelsOf(ctx context.Context, t *testing.T, wg *sync.WaitGroup, cfg *rest.Config, ns, name string, tweaks ...func(*sharding.SharderConfig)) <-chan labelReport {
	reports := make(chan labelReport, 16)
	var counts sync.Map
	startSharder(ctx, t, wg, cfg, ns, &counts, append(tweaks, func(sc *sharding.SharderConfig) {
		sc.OnLabel = func(action string, key informer.Key, member string) {
			if key.Name != name {
				return
			}
			select {
			case reports <- labelReport{labelStep{action, member}, time.Now()}:
			case <-ctx.Done():
			}
		}
	})...)
	return reports
}
