package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// CRD describes a CustomResourceDefinition for InstallCRD: one version,
// served and stored.
type CRD struct {
	Group, Version, Kind string
	// Plural is the resource name, chosen by the CRD's author: nothing
	// derives it from Kind.
	Plural string
	// ClusterScoped makes the resource cluster-wide. Default: namespaced.
	ClusterScoped bool
	// Schema is the version's openAPIV3Schema, a structural schema as a
	// real operator's CRD has, which the API server prunes and validates
	// by. nil: an object that may hold any field
	// (x-kubernetes-preserve-unknown-fields), which skips both.
	Schema map[string]any
}

// crdsPath is where the API server keeps CustomResourceDefinitions.
const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func (crd CRD) name() string { return crd.Plural + "." + crd.Group }

// InstallCRD creates the CustomResourceDefinition, unless one of its name
// exists already, and returns once it is served (WaitForCRD), or ctx
// ends.
func (cp *ControlPlane) InstallCRD(ctx context.Context, crd CRD) error {
	return InstallCRD(ctx, cp.Config(), crd)
}

// InstallCRD is ControlPlane.InstallCRD on the API server cfg reaches.
func InstallCRD(ctx context.Context, cfg *rest.Config, crd CRD) error {
	client, err := CoreV1Client(cfg)
	if err != nil {
		return err
	}
	scope := "Namespaced"
	if crd.ClusterScoped {
		scope = "Cluster"
	}
	schema := crd.Schema
	if schema == nil {
		schema = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.name()},
		"spec": map[string]any{
			"group": crd.Group, "scope": scope,
			"names": map[string]any{"plural": crd.Plural, "kind": crd.Kind, "listKind": crd.Kind + "List"},
			"versions": []any{map[string]any{"name": crd.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema}}},
		},
	})
	if err != nil {
		return err
	}
	err = client.Post().AbsPath(crdsPath).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: creating CRD %s: %w", crd.name(), err)
	}
	return WaitForCRD(ctx, cfg, crd)
}

// WaitForCRD returns once the CustomResourceDefinition is Established,
// discovery lists its resource (what a factory's RESTMapper reads: the
// API server serves the resource a moment before discovery lists it),
// and a LIST and a WATCH of it answer; or ctx ends. A CRD whose names were not
// accepted fails at once, as does one that does not exist. A control
// plane started on a saved etcd that holds a CRD serves it a moment
// after it starts: call this before any informer of it.
func WaitForCRD(ctx context.Context, cfg *rest.Config, crd CRD) error {
	client, err := CoreV1Client(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	d := discovery.ToDiscoveryInterfaceWithContext(dc)
	gv := crd.Group + "/" + crd.Version
	served := func() (string, error) {
		if why, err := established(ctx, client, crd); why != "" || err != nil {
			return why, err
		}
		// A partial answer (a group failing) still lists what it can.
		_, lists, err := d.ServerGroupsAndResourcesWithContext(ctx)
		if !listsResource(lists, gv, crd.Plural) {
			why := gv + " does not list " + crd.Plural
			if err != nil {
				why += ": " + err.Error()
			}
			return why, nil
		}
		var list metav1.PartialObjectMetadataList // only its resourceVersion is read
		if err := client.Get().AbsPath("/apis", crd.Group, crd.Version, crd.Plural).Param("limit", "1").Do(ctx).Into(&list); err != nil {
			return "a LIST of " + crd.Plural + " failed: " + err.Error(), nil
		}
		// The resource's watch cache starts with its first request and
		// answers a WATCH 429 until it has filled: an informer's first
		// WATCH must not be the one that meets it. From the LIST's
		// resourceVersion, it is the cache's to answer, and sends no
		// object that exists.
		watch, err := client.Get().AbsPath("/apis", crd.Group, crd.Version, crd.Plural).Param("watch", "true").
			Param("resourceVersion", list.ResourceVersion).Param("timeoutSeconds", "1").Stream(ctx)
		if err != nil {
			return "a WATCH of " + crd.Plural + " failed: " + err.Error(), nil
		}
		watch.Close()
		return "", nil
	}
	for {
		why, err := served()
		if err != nil || why == "" {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: CRD %s created but not served (last: %s): %w", crd.name(), why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// established reads the CRD's conditions: "" once Established, else why
// not. A NamesAccepted condition that is False, or no CRD, is an error.
func established(ctx context.Context, client *rest.RESTClient, crd CRD) (string, error) {
	raw, err := client.Get().AbsPath(crdsPath, crd.name()).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("testenv: the CRD %s does not exist: create it first (InstallCRD)", crd.name())
	}
	if err != nil {
		return err.Error(), nil // the API server may be starting: ask again
	}
	var got struct {
		Status struct {
			Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		return "", fmt.Errorf("testenv: reading the CRD %s: %w", crd.name(), err)
	}
	why := "no Established condition yet"
	for _, c := range got.Status.Conditions {
		switch {
		case c.Type == "NamesAccepted" && c.Status == "False":
			return "", fmt.Errorf("testenv: the CRD %s: names not accepted: %s: %s", crd.name(), c.Reason, c.Message)
		case c.Type == "Established" && c.Status == "True":
			return "", nil
		case c.Type == "Established":
			why = fmt.Sprintf("Established %s: %s %s", c.Status, c.Reason, c.Message)
		}
	}
	return why, nil
}

// listsResource reports whether discovery's lists hold resource in
// group/version gv.
func listsResource(lists []*metav1.APIResourceList, gv, resource string) bool {
	for _, l := range lists {
		if l != nil && l.GroupVersion == gv &&
			slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }) {
			return true
		}
	}
	return false
}

// DeleteCRD deletes the CustomResourceDefinition and returns once it is
// gone: the apiserver has deleted every object of it and stopped serving
// its resource. A CRD that does not exist is not an error.
func (cp *ControlPlane) DeleteCRD(ctx context.Context, crd CRD) error {
	client, err := CoreV1Client(cp.Config())
	if err != nil {
		return err
	}
	path := crdsPath + "/" + crd.name()
	if err := client.Delete().AbsPath(path).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("testenv: deleting CRD %s: %w", crd.name(), err)
	}
	for {
		err := client.Get().AbsPath(path).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: CRD %s deleted but still there (last answer: %v): %w", crd.name(), err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
