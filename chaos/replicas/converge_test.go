package replicas

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// convergenceBound is how long after the last fault ended every object
// must be owned by exactly one live member. Each term is a step the
// worst case may need, one after the other (in truth several overlap):
//
//   - the sharder may have died in the last fault: a standby takes its
//     Lease LeaseDuration after it saw the last renew, polling every
//     RetryPeriod·(1+JitterFactor): L + 2·P·(1+J);
//   - a sharder whose process started late waits until it has watched
//     the Leases for a LeaseDuration before it acts: L;
//   - the members that died are judged dead LeaseDuration after their
//     last renew was seen, one poll later: L + 2·P·(1+J);
//   - a replica whose term ended joins again after RetryPeriod: P;
//   - after a 403 window of length W, a reflector retries with backoff
//     (first wait 800 ms, doubling, jitter up to 2×), so its first
//     attempt after the window comes within 2·W + 1.6 s of the window's
//     end if it started afresh; but an earlier window less than the
//     backoff's reset time (2 min) before leaves it doubled, up to its
//     cap: the members' and the sharder's informers cap it at L, so up
//     to 2·L with jitter. The sharder's queue doubles its per-key delays
//     the same way, up to L, with no queue-wide bucket to wait in;
//   - every object may move once, a drain being three PATCHes, at the
//     replicas' client QPS: 3·objects/QPS;
//   - and 10 s for the requests themselves on a busy machine, with the
//     race detector.
func convergenceBound(t timing, forbidHold time.Duration, objects int) time.Duration {
	poll := time.Duration(float64(t.Retry) * (1 + leaderelection.JitterFactor))
	return t.Lease + 2*poll + t.Lease + t.Lease + 2*poll + t.Retry +
		max(2*forbidHold+1600*time.Millisecond, 2*t.Lease) +
		time.Duration(3*float64(objects)/t.QPS*float64(time.Second)) +
		10*time.Second
}

// notConverged looks once at the API server and returns why the run has
// not converged, or "" if it has: every running replica is a member of
// each ring and holds a fresh Lease, every object (parents and children)
// carries each ring's label naming the live member the ring assigns its
// RingKey to, none drains, every parent that must exist does (and no
// other), each has its child in each ring, and each ring's owner has
// reconciled it.
func (r *run) notConverged(ctx context.Context) (string, error) {
	leases := &coordinationv1.LeaseList{}
	if err := r.leases.Get().Namespace(r.ns).Resource("leases").Do(ctx).Into(leases); err != nil {
		return "", err
	}
	cms := &corev1.ConfigMapList{}
	if err := r.core.Get().Namespace(r.ns).Resource("configmaps").Param("labelSelector", appLabel).Do(ctx).Into(cms); err != nil {
		return "", err
	}
	fresh := map[string]bool{} // holders of a Lease renewed within its duration (one machine: one clock)
	for _, l := range leases.Items {
		if l.Spec.HolderIdentity != nil && l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < r.timing.Lease {
			fresh[*l.Spec.HolderIdentity] = true
		}
	}
	running := r.fleet.running()
	owners := map[string]*sharding.Ring{}
	for _, ring := range rings {
		live := r.fleet.liveMembers(ring)
		perProc := map[string]int{}
		var ids []string
		for id, p := range live {
			perProc[p.name]++
			ids = append(ids, id)
			if !fresh[id] {
				return fmt.Sprintf("%s member %s (%s) holds no fresh Lease", ring, id, p.name), nil
			}
		}
		for _, p := range running {
			if perProc[p.name] != 1 {
				return fmt.Sprintf("%s has %d live members of %s", p.name, perProc[p.name], ring), nil
			}
		}
		slices.Sort(ids)
		built, err := sharding.NewRing(ids, 0)
		if err != nil {
			return fmt.Sprintf("ring %s of %v: %v", ring, ids, err), nil
		}
		owners[ring] = built
	}
	byName := map[string]*corev1.ConfigMap{}
	for i := range cms.Items {
		cm := &cms.Items[i]
		byName[cm.Name] = cm
		for _, ring := range rings {
			shard := sharding.Shard{Ring: ring}
			want := owners[ring].Owner(sharding.RingKey(cm))
			if got := cm.Labels[shard.Label()]; got != want {
				return fmt.Sprintf("%s is labelled %q in %s, the ring says %q", cm.Name, got, ring, want), nil
			}
			if cm.Labels[shard.DrainLabel()] != "" {
				return fmt.Sprintf("%s drains in %s", cm.Name, ring), nil
			}
		}
	}
	must, unsure := r.writers.expected()
	for name := range must {
		cm := byName[name]
		if cm == nil {
			return fmt.Sprintf("parent %s is missing", name), nil
		}
		for _, ring := range rings {
			if byName[childName(name, ring)] == nil {
				return fmt.Sprintf("parent %s has no child in %s", name, ring), nil
			}
			owner := cm.Labels[sharding.Shard{Ring: ring}.Label()]
			if !strings.HasPrefix(cm.Annotations[reconciledBy(ring)], owner+"/") {
				return fmt.Sprintf("parent %s: its %s owner %s has not reconciled it (annotation %q)", name, ring, owner, cm.Annotations[reconciledBy(ring)]), nil
			}
		}
	}
	for name, cm := range byName {
		if metav1.GetControllerOf(cm) == nil && !must[name] && !unsure[name] {
			return fmt.Sprintf("parent %s exists but was deleted or never created", name), nil
		}
	}
	return "", nil
}

// awaitConverged looks every 250 ms until the run has converged and
// returns how long that took from since. It gives up after guard and
// returns the last reason it saw.
func (r *run) awaitConverged(ctx context.Context, since time.Time, guard time.Duration) (time.Duration, string) {
	reason := "not looked yet"
	for time.Since(since) < guard {
		why, err := r.notConverged(ctx)
		switch {
		case err != nil:
			reason = "reading the API server: " + err.Error()
		case why == "":
			return time.Since(since), ""
		default:
			reason = why
		}
		if !sleep(ctx, 250*time.Millisecond) {
			return time.Since(since), "ctx ended: " + reason
		}
	}
	return time.Since(since), reason
}
