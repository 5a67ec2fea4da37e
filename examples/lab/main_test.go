package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// labArgs points the lab at the test's control plane and namespace.
func labArgs(t *testing.T, cp *testenv.ControlPlane, ns string, more ...string) []string {
	return append([]string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns}, more...)
}

func runLab(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.String()
}

func TestLabReconcilesEveryClusterAndReportsItsCost(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	out := runLab(t, labArgs(t, cp, ns,
		"--crs=5", "--components=fe,be", "--sync-period=2s", "--idle=3s", "--cleanup=false"))

	mustMatch(t, out, `All 5 Clusters reconciled in \S+`)
	calls := mustMatch(t, out, `Calls per reconcile: ([0-9.]+)`)
	if v, _ := strconv.ParseFloat(calls[1], 64); v <= 0 {
		t.Errorf("calls per reconcile = %s, want > 0", calls[1])
	}
	mustMatch(t, out, `Client-side throttling: \d+ waits`)
	for _, verb := range []string{"create +configmaps", "update +clusters/status", "list +clusters", "list +configmaps", "watch +clusters", "watch +configmaps"} {
		mustMatch(t, out, `(?m)^\s+`+verb+` +\d+`)
	}
	idle := mustMatch(t, out, `Idle: \d+ requests in \S+ with nothing changing = ([0-9.]+) req/s \((\d+) reconciles`)
	// The sync period (2s) elapsed within the idle window (3s), so the
	// resync ran reconciles, and those read the cache: no request at all.
	if idle[1] != "0.000" {
		t.Errorf("idle traffic of the cache-reading reconcile = %s req/s, want 0", idle[1])
	}
	if n, _ := strconv.Atoi(idle[2]); n == 0 {
		t.Errorf("no reconcile ran in the idle window; the 2s resync should have run them")
	}
	checkServerState(t, cp, ns, 5, []string{"fe", "be"})
}

func TestLabNaiveReconcileWritesEveryTime(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	out := runLab(t, labArgs(t, cp, ns,
		"--crs=3", "--components=fe", "--naive", "--sync-period=1s", "--idle=2500ms", "--cleanup=false", "--progress=false"))

	mustMatch(t, out, `All 3 Clusters reconciled`)
	// GET the Cluster, GET the ConfigMap, create it, update the status.
	mustMatch(t, out, `Calls per reconcile: 4\.0`)
	mustMatch(t, out, `(?m)^\s+get +clusters +\d+`)
	idle := mustMatch(t, out, `= ([0-9.]+) req/s`)
	if v, _ := strconv.ParseFloat(idle[1], 64); v <= 0 {
		t.Errorf("idle traffic of the naive reconcile = %s req/s, want > 0: every resync GETs and PUTs", idle[1])
	}
	checkServerState(t, cp, ns, 3, []string{"fe"})
}

func TestLabCompareRunsThePostsConfigurations(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	svg := filepath.Join(t.TempDir(), "lab.svg")
	out := runLab(t, labArgs(t, cp, ns,
		"--compare", "--crs=4", "--components=fe", "--rtt=20ms", "--sync-period=1s", "--idle=2s", "--progress=false", "--svg", svg))

	mustMatch(t, out, `default \(1 worker, 20/30\)`)
	mustMatch(t, out, `sync 1s, naive`)
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("chart %s: %v, %.40q", svg, err, b)
	}
}

func mustMatch(t *testing.T, out, pattern string) []string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks %q", pattern)
	}
	return m
}

// checkServerState reads the server, not the output: n Clusters, each
// with a Ready status and one ConfigMap per component.
func checkServerState(t *testing.T, cp *testenv.ControlPlane, ns string, n int, components []string) {
	t.Helper()
	ctx := t.Context()
	clusters, err := jsonClient(cp.Config(), clustersGVR.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	body, err := clusters.Get().Namespace(ns).Resource(plural).Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if err := list.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("%d Clusters on the server, want %d", len(list.Items), n)
	}
	core, err := testenv.CoreV1Client(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range list.Items {
		if !isReady(&cr, len(components)) {
			t.Errorf("Cluster %s has status %v, want Ready for generation %d", cr.GetName(), cr.Object["status"], cr.GetGeneration())
		}
		for _, comp := range components {
			cm := &corev1.ConfigMap{}
			name := cr.GetName() + "-" + comp
			if err := core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm); err != nil {
				t.Errorf("ConfigMap %s: %v", name, err)
				continue
			}
			replicas, _, _ := unstructured.NestedInt64(cr.Object, "spec", comp, "replicas")
			if cm.Data["component"] != comp || cm.Data["replicas"] != fmt.Sprint(replicas) {
				t.Errorf("ConfigMap %s has data %v, want component %s with %d replicas", name, cm.Data, comp, replicas)
			}
		}
	}
}

// A run that made the namespace and the CRD removes them at the end (with
// --cleanup, the default), so a demo leaves the cluster as it found it.
func TestLabRemovesTheNamespaceAndCRDItCreated(t *testing.T) {
	cp := testenv.Shared(t)
	ctx := t.Context()
	gone := func(client *rest.RESTClient, resource, name string) bool {
		return apierrors.IsNotFound(client.Get().Resource(resource).Name(name).Do(ctx).Error())
	}
	crds, err := crdClient(cp.Config())
	require.NoError(t, err)
	require.NoError(t, deleteCRD(ctx, cp.Config()), "start without the CRD, so that this run creates it")
	core, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	ns := fmt.Sprintf("lab-cleanup-%d", time.Now().UnixNano()%1_000_000)

	runLab(t, labArgs(t, cp, ns, "--crs=2", "--components=fe", "--idle=0", "--progress=false"))
	assert.True(t, gone(crds, "customresourcedefinitions", crdName), "the CRD the run created is deleted")
	nsObj := &corev1.Namespace{}
	err = core.Get().Resource("namespaces").Name(ns).Do(ctx).Into(nsObj)
	assert.True(t, apierrors.IsNotFound(err) || nsObj.DeletionTimestamp != nil,
		"the namespace the run created is deleted (it stays Terminating on a control plane without controllers): %v", err)
}
