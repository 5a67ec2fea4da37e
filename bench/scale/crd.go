package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// widgetsCRDName is the CustomResourceDefinition's name: plural.group.
var widgetsCRDName = Widgets + "." + WidgetGroupVersion.Group

// widgetsCRD is the CustomResourceDefinition of Widget: namespaced, one
// version, and a structural schema that names spec.payload, so the
// apiserver prunes and validates as it does for a real operator's CRD
// (x-kubernetes-preserve-unknown-fields would skip both, and flatter the
// apiserver's side of every sync).
var widgetsCRD = map[string]any{
	"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	"metadata": map[string]any{"name": widgetsCRDName},
	"spec": map[string]any{
		"group": WidgetGroupVersion.Group, "scope": "Namespaced",
		"names": map[string]any{"plural": Widgets, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
		"versions": []any{map[string]any{
			"name": WidgetGroupVersion.Version, "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"spec": map[string]any{
						"type": "object", "required": []string{"payload"},
						"properties": map[string]any{"payload": map[string]any{"type": "string"}},
					},
				},
			}},
		}},
	},
}

// crdPath is where the apiserver keeps CustomResourceDefinitions.
const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// installWidgetsCRD creates the CRD of Widget, unless it exists, and
// returns once widgets are served (widgetsServed), or ctx ends.
func installWidgetsCRD(ctx context.Context, cfg *rest.Config) error {
	client, err := jsonClient(cfg, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"})
	if err != nil {
		return err
	}
	body, err := json.Marshal(widgetsCRD)
	if err != nil {
		return err
	}
	err = client.Post().AbsPath(crdPath).SetHeader("Content-Type", runtime.ContentTypeJSON).Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("scale: creating the CRD %s: %w", widgetsCRDName, err)
	}
	return widgetsServed(ctx, cfg)
}

// widgetsServed returns once the CRD of Widget is Established and
// discovery lists widgets (what our factory's RESTMapper reads), or ctx
// ends. A CRD whose names were not accepted fails at once: no wait would
// change that. A control plane started on a saved etcd that holds the
// CRD serves it a moment after it starts: call this before any informer.
func widgetsServed(ctx context.Context, cfg *rest.Config) error {
	client, err := jsonClient(cfg, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"})
	if err != nil {
		return err
	}
	last := "no answer yet"
	for {
		established, why, err := crdEstablished(ctx, client)
		if err != nil {
			return err
		}
		if established {
			break
		}
		last = why
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("scale: the CRD %s is not Established (last: %s): %w", widgetsCRDName, last, err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	d := discovery.ToDiscoveryInterfaceWithContext(dc)
	for {
		// A partial answer (a group failing) still lists what it can.
		_, lists, err := d.ServerGroupsAndResourcesWithContext(ctx)
		if listsResource(lists, WidgetsResource) {
			return nil
		}
		last = fmt.Sprintf("%s not listed", WidgetsResource.GroupVersion())
		if err != nil {
			last += ": " + err.Error()
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("scale: the CRD %s is Established but discovery does not serve %s (last: %s): %w", widgetsCRDName, Widgets, last, err)
		}
	}
}

// crdEstablished reads the CRD's conditions: Established, or why not. A
// NamesAccepted condition that is False is an error.
func crdEstablished(ctx context.Context, client *rest.RESTClient) (bool, string, error) {
	raw, err := client.Get().AbsPath(crdPath, widgetsCRDName).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return false, "", fmt.Errorf("scale: the CRD %s does not exist: create it first (installWidgetsCRD)", widgetsCRDName)
	}
	if err != nil {
		return false, err.Error(), nil // the apiserver may be starting: ask again
	}
	var crd struct {
		Status struct {
			Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &crd); err != nil {
		return false, "", fmt.Errorf("scale: reading the CRD %s: %w", widgetsCRDName, err)
	}
	why := "no Established condition yet"
	for _, c := range crd.Status.Conditions {
		switch {
		case c.Type == "NamesAccepted" && c.Status == "False":
			return false, "", fmt.Errorf("scale: the CRD %s: names not accepted: %s: %s", widgetsCRDName, c.Reason, c.Message)
		case c.Type == "Established" && c.Status == "True":
			return true, "", nil
		case c.Type == "Established":
			why = fmt.Sprintf("Established %s: %s %s", c.Status, c.Reason, c.Message)
		}
	}
	return false, why, nil
}

// listsResource reports whether discovery's lists hold gvr.
func listsResource(lists []*metav1.APIResourceList, gvr schema.GroupVersionResource) bool {
	for _, l := range lists {
		if l != nil && l.GroupVersion == gvr.GroupVersion().String() &&
			slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }) {
			return true
		}
	}
	return false
}

// pause waits d, or returns ctx's error if it ends first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
