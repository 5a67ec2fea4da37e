package sharding_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// An owner reference's uid is written by whoever writes the reference:
// kube-apiserver checks only that it is not empty, so "urn:uuid:…", or
// one longer than 63 characters, is a valid uid but no label value. The
// drain label's value names the controller (drainvalue.go), and must
// still be one the server takes: else the drain is refused with 422
// Invalid on every try, and the object never leaves its member.
func TestAnObjectWhoseControllersUIDIsNoLabelValueIsDrainedAndMoves(t *testing.T) {
	for name, uid := range map[string]types.UID{
		"a urn":            "urn:uuid:5ec7e700-0000-4000-8000-000000000003",
		"64 characters":    types.UID(strings.Repeat("5ec7e700", 8)),
		"an ending hyphen": "5ec7e700-0000-4000-8000-",
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newFakeCluster(t, nil)
				ns, cfg := c.ns, c.cfg
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				defer wg.Wait()
				defer cancel()

				members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
					runRingKeyReconciler(ctx, t, cfg, ns, shard)
				})
				guard := time.Minute // simulated: many times what this takes
				_, want := createOffRing(ctx, t, c, members, uid)
				labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "settings")
				require.Equal(t, "drain", receive(t, labelled, guard).action, "the object leaves its live member by a drain")
				require.Equal(t, labelStep{"assign", want}, receive(t, labelled, guard).labelStep,
					"its member lets it go, and the ring's member gets it")
			})
		})
	}
}
