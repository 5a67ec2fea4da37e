package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestTraceFollowsOneChangeThroughEveryStage(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out bytes.Buffer
	err := run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns,
		"--cut-after", "200ms", "--outage", "1s", "--work", "100ms"}, &out)
	got := out.String()
	t.Log(got)
	require.NoError(t, err)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	var left corev1.ConfigMapList
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(&left))
	for _, cm := range left.Items {
		assert.NotContains(t, []string{"before", "demo", "doomed"}, cm.Name, "the example removes its objects when it ends")
	}

	// "demo"'s creation, stage by stage.
	for _, line := range []string{
		`reflector\s+watch-event\s+demo\s+rv=\d+\s+ADDED`,
		`deltafifo\s+queued\s+demo\s+rv=\d+\s+Added`,
		`indexer\s+stored\s+demo`,
		`indexer\s+index-changed\s+demo.*app`,
		`listener\s+delivered\s+demo.*add to enqueue`,
		`listener\s+delivered\s+demo.*add to narrate`,
		`workqueue\s+added\s+demo`,
		`workqueue\s+done\s+demo`,
		`>> reconcile demo: the cache says`,
	} {
		assert.Regexp(t, line, got)
	}
	// After the cut: the watch ends and a new one starts.
	_, afterCut, found := strings.Cut(got, "== 4.")
	require.True(t, found, "step 4 ran")
	assert.Regexp(t, `reflector\s+watch-end`, afterCut)
	assert.Regexp(t, `reflector\s+watch\s+rv=\d+`, afterCut)
	assert.Contains(t, afterCut, "Verdict: the reflector re-watched from rv=")
	// The outage, with the watch cache on: no 410, an ordinary delete.
	_, afterOutage, found := strings.Cut(got, "== 5.")
	require.True(t, found, "step 5 ran")
	assert.Contains(t, afterOutage, ">> narrate: OnDelete(doomed, finalStateUnknown=false)")
	assert.Contains(t, afterOutage, "Verdict: no 410 came")
	assert.Regexp(t, `demo\s+\d+\s+\d+`, afterOutage, "the summary table has a row for demo")
}

// With the watch cache off and etcd compacted during the outage, the
// re-watch is answered 410 Gone: the informer relists and infers the delete.
func TestTraceShowsRelistAndFinalStateUnknownDelete(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out bytes.Buffer
	err := run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", "trace",
		"--cut-after", "0", "--outage", "1s", "--work", "50ms", "--etcd", cp.EtcdURL()}, &out)
	got := out.String()
	t.Log(got)
	require.NoError(t, err)

	_, afterOutage, found := strings.Cut(got, "== 5.")
	require.True(t, found, "step 5 ran")
	assert.Regexp(t, `reflector\s+relist`, afterOutage)
	assert.Regexp(t, `deltafifo\s+queued\s+doomed.*final state unknown`, afterOutage)
	assert.Contains(t, afterOutage, ">> narrate: OnDelete(doomed, finalStateUnknown=true)")
	assert.Contains(t, afterOutage, "so the DeltaFIFO queued a delete whose final state is unknown")
}
