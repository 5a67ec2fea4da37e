package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/simulation"
	"github.com/listwatch/informer/testenv"
)

// The skeleton, as the leader's controller of three replicas, on
// simulated time, under the fault schedules three seeds draw (from
// latency, hangs, error answers, 403 windows, a partition, a pause, a
// kill, cut watches, a compaction, the Lease deleted). The simulator checks the library's part
// around it (one leader at a time, one reconcile per key) and, once the
// faults stop, the skeleton's own: every ConfigMap the writers keep has
// its Secret, with the same data, and no Secret outlives its ConfigMap.
// A failing seed prints its replay: go test -run this test's name, with
// the seed in the loop below.
func TestTheSkeletonKeepsASecretPerConfigMapUnderSimulatedFaults(t *testing.T) {
	for seed := range int64(3) {
		res := simulation.Check(t, simulation.Options{
			Seed: seed + 1, Scenario: simulation.LeaderElected, Label: "app=demo",
			Controller: &simulation.Controller{
				Run: func(ctx context.Context, term simulation.Term) {
					_ = control(ctx, term.Config, term.Namespace, term.Trace) // an error ends the term's work; the leader stays
				},
				Converged: secretsMatchConfigMaps,
			},
		}, nil) // nil: the seed draws the schedule
		if res.Failed() {
			t.Fatalf("seed %d:\n%s", seed+1, res.Report())
		}
	}
}

// secretsMatchConfigMaps is the skeleton's end state: a Secret, owned by
// it and with its data, for every app=demo ConfigMap, and none left for
// a ConfigMap that is gone.
func secretsMatchConfigMaps(ctx context.Context, server *rest.Config) error {
	client, err := testenv.CoreV1Client(server)
	if err != nil {
		return err
	}
	cms, secrets := &corev1.ConfigMapList{}, &corev1.SecretList{}
	for resource, list := range map[string]runtime.Object{"configmaps": cms, "secrets": secrets} {
		err := client.Get().Namespace(simulation.Namespace).Resource(resource).Param("labelSelector", "app=demo").Do(ctx).Into(list)
		if err != nil {
			return err
		}
	}
	byName := map[string]corev1.Secret{}
	for _, s := range secrets.Items {
		byName[s.Name] = s
	}
	for _, cm := range cms.Items {
		s, ok := byName[cm.Name]
		switch {
		case !ok:
			return fmt.Errorf("ConfigMap %s has no Secret", cm.Name)
		case !metav1.IsControlledBy(&s, &cm):
			return fmt.Errorf("Secret %s is not controlled by its ConfigMap", cm.Name)
		case !maps.EqualFunc(s.Data, cm.Data, func(b []byte, v string) bool { return string(b) == v }):
			return fmt.Errorf("Secret %s holds %v, its ConfigMap %v", cm.Name, s.Data, cm.Data)
		}
		delete(byName, cm.Name)
	}
	if len(byName) > 0 {
		return fmt.Errorf("Secrets %v outlived their ConfigMaps", slices.Sorted(maps.Keys(byName)))
	}
	return nil
}
