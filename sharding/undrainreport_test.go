package sharding_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// OnLabel reports ("undrain", key, "") when a drain is taken back: the
// object stays where it is. A child drained off a (its parent was going
// to b) is taken back when b leaves and the parent comes back to a; it
// never left a, so that is an undrain, not a move.
func TestAChildsDrainTakenBackIsReportedAsAnUndrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "member" && r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/child") {
				return fakeapiserver.Fault{Hang: true} // a cannot let the child go
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		ctxB, leaveB := context.WithCancel(ctx)

		run := func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconciler(ctx, t, c.as("member"), ns, shard)
		}
		a := startMembers(ctx, t, &wg, cfg, ns, []string{"a"}, run)[0]
		b := startMembers(ctxB, t, &wg, cfg, ns, []string{"b"}, run)[0]
		r := must(sharding.NewRing([]string{a, b}, 0))
		var name string
		for i := 0; ; i++ {
			name = fmt.Sprintf("parent-%d", i)
			if r.Owner(ns+"/"+name) == b {
				break
			}
		}
		label := sharding.Shard{Ring: ring}.Label()
		isController := true
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{label: a}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: map[string]string{label: a},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: parent.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(child).Do(ctx).Error())

		steps := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "child")
		require.Equal(t, labelStep{"drain", b}, receive(t, steps, time.Minute).labelStep, "the child is drained toward its parent's next member")
		leaveB()
		step := receive(t, steps, time.Minute).labelStep
		require.Equal(t, a, labelOf(ctx, t, c.core, ns, "child"), "the child stayed on a")
		require.Equal(t, labelStep{"undrain", ""}, step, "the child's drain was taken back: it never left a")
	})
}
