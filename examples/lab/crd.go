package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// The custom resource this lab's operator manages: a Cluster, like
// StarRocks' StarRocksCluster, whose spec sizes its components.
const (
	group    = "lab.listwatch.dev"
	version  = "v1"
	kind     = "Cluster"
	plural   = "clusters"
	crdName  = plural + "." + group
	runLabel = group + "/run"     // which lab run made an object; informers select on it
	ownerKey = group + "/cluster" // on a ConfigMap: the Cluster it belongs to
)

var clustersGVR = schema.GroupVersionResource{Group: group, Version: version, Resource: plural}

// crdManifest is the CustomResourceDefinition, as the JSON you would give
// kubectl. spec has a size for each of StarRocks' components (fe, cn,
// be); x-kubernetes-preserve-unknown-fields lets --components name more
// (say fe-proxy) without a schema change. status is a subresource, so the
// operator writes it with its own PUT, as controller-runtime's
// Status().Update does.
func crdManifest() map[string]any {
	size := map[string]any{"type": "object", "properties": map[string]any{
		"replicas": map[string]any{"type": "integer", "minimum": 0},
	}}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crdName},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": "cluster", "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{
				"name": version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{
							"type":                                 "object",
							"x-kubernetes-preserve-unknown-fields": true,
							"properties":                           map[string]any{"fe": size, "cn": size, "be": size},
						},
						"status": map[string]any{
							"type": "object",
							"properties": map[string]any{
								"observedGeneration": map[string]any{"type": "integer"},
								"phase":              map[string]any{"type": "string"},
								"components":         map[string]any{"type": "integer"},
							},
						},
					},
				}},
			}},
		},
	}
}

// jsonClient returns a rest client for one API group that sends and
// receives raw JSON: we marshal request bodies ourselves and unmarshal
// answers into *unstructured.Unstructured. That is all a client for a
// custom resource needs, with no generated types and no dynamic client.
// The scheme only knows metav1's Status, so rest can turn an error
// answer into an apierrors.StatusError (IsNotFound, IsConflict, ...).
func jsonClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &gv
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// decode reads a JSON answer into an unstructured object.
func decode(body []byte, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(body); err != nil {
		return nil, err
	}
	return u, nil
}

// installCRD creates the Cluster CRD unless it exists, then waits until
// the server says it is Established: only then does it serve
// /apis/lab.listwatch.dev/v1, and a create sent earlier gets a 404.
func installCRD(ctx context.Context, cfg *rest.Config) (created bool, err error) {
	client, err := crdClient(cfg)
	if err != nil {
		return false, err
	}
	body, err := json.Marshal(crdManifest())
	if err != nil {
		return false, err
	}
	err = client.Post().Resource("customresourcedefinitions").Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating the CRD %s: %w", crdName, err)
	}
	created = err == nil
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		crd, err := decode(client.Get().Resource("customresourcedefinitions").Name(crdName).Do(ctx).Raw())
		if err != nil {
			return created, fmt.Errorf("reading the CRD %s: %w", crdName, err)
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return created, nil
			}
		}
		select {
		case <-ctx.Done():
			return created, fmt.Errorf("the CRD %s never became Established: %w", crdName, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deleteCRD deletes the Cluster CRD (and with it every Cluster) and waits
// until it is gone, so that a later run does not find it terminating.
func deleteCRD(ctx context.Context, cfg *rest.Config) error {
	client, err := crdClient(cfg)
	if err != nil {
		return err
	}
	err = client.Delete().Resource("customresourcedefinitions").Name(crdName).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting the CRD %s: %w", crdName, err)
	}
	for {
		err := client.Get().Resource("customresourcedefinitions").Name(crdName).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the CRD %s is still there: %w", crdName, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func crdClient(cfg *rest.Config) (*rest.RESTClient, error) {
	return jsonClient(cfg, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"})
}

// newCluster is one custom resource: every component sized 1 to 3.
func newCluster(ns, name, run string, components []string, i int) *unstructured.Unstructured {
	spec := map[string]any{}
	for j, c := range components {
		spec[c] = map[string]any{"replicas": int64(1 + (i+j)%3)}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/" + version,
		"kind":       kind,
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{runLabel: run},
		},
		"spec": spec,
	}}
	return u
}

// createClusters creates n Clusters the way a user (kubectl, a test
// harness) would: from a client of its own, not the operator's, so these
// requests are neither counted nor throttled as the operator's. A few
// creates run at once so that creating them does not dominate the run.
// Right after the CRD is Established the group can still answer 404 for
// a moment, so a 404 is retried.
func createClusters(ctx context.Context, client *rest.RESTClient, ns, run string, n int, components []string) error {
	const parallel = 8
	errs := make(chan error, n)
	sem := make(chan struct{}, parallel)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			body, err := newCluster(ns, clusterName(run, i), run, components, i).MarshalJSON()
			if err == nil {
				for attempt := 0; ; attempt++ {
					err = client.Post().Namespace(ns).Resource(plural).Body(body).Do(ctx).Error()
					if !apierrors.IsNotFound(err) || attempt == 50 {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return fmt.Errorf("creating the Clusters: %w", err)
		}
	}
	return nil
}

func clusterName(run string, i int) string { return fmt.Sprintf("lab-%s-%03d", run, i) }

// cleanUp deletes what run made: its Clusters and their ConfigMaps, by
// label. (A real cluster's garbage collector would delete the ConfigMaps
// through their owner references; the local control plane has none.)
func cleanUp(ctx context.Context, clusters, core *rest.RESTClient, ns, run string) error {
	sel := runLabel + "=" + run
	if err := clusters.Delete().Namespace(ns).Resource(plural).
		Param("labelSelector", sel).Do(ctx).Error(); err != nil {
		return fmt.Errorf("deleting the Clusters: %w", err)
	}
	if err := core.Delete().Namespace(ns).Resource("configmaps").
		Param("labelSelector", sel).Do(ctx).Error(); err != nil {
		return fmt.Errorf("deleting the ConfigMaps: %w", err)
	}
	return nil
}
