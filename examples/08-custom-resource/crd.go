package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// widgetsCRD is the CustomResourceDefinition of Widget: namespaced, one
// version, a schema for spec and status, and the status subresource, so
// that a write of the status cannot change the spec and the other way
// round.
var widgetsCRD = map[string]any{
	"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	"metadata": map[string]any{"name": "widgets." + GroupVersion.Group},
	"spec": map[string]any{
		"group": GroupVersion.Group, "scope": "Namespaced",
		"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
		"versions": []any{map[string]any{
			"name": GroupVersion.Version, "served": true, "storage": true,
			"subresources": map[string]any{"status": map[string]any{}},
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{
						"size":  map[string]any{"type": "integer", "minimum": 0},
						"tags":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
						"ports": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
					}},
					"status": map[string]any{"type": "object", "properties": map[string]any{
						"ready":              map[string]any{"type": "boolean"},
						"observedGeneration": map[string]any{"type": "integer"},
					}},
				},
			}},
		}},
	},
}

// installCRD creates the CRD unless it exists, and returns once the API
// server serves widgets and its discovery lists them: a CRD is served a
// moment after it is created, and listed by discovery, where the factory
// finds the resource of a kind, a moment after that.
func installCRD(ctx context.Context, client *rest.RESTClient, disc discovery.DiscoveryInterfaceWithContext) error {
	body, err := json.Marshal(widgetsCRD)
	if err != nil {
		return err
	}
	err = client.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CRD of widgets: %w", err)
	}
	for {
		if client.Get().AbsPath("/apis", GroupVersion.Group, GroupVersion.Version, "widgets").Do(ctx).Error() == nil && discoveryLists(ctx, disc) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the CRD of widgets was created but is not served: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// discoveryLists reports whether discovery lists widgets in GroupVersion.
func discoveryLists(ctx context.Context, disc discovery.DiscoveryInterfaceWithContext) bool {
	_, lists, _ := disc.ServerGroupsAndResourcesWithContext(ctx) // a partial answer still lists what it can
	for _, list := range lists {
		if list.GroupVersion != GroupVersion.String() {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == "widgets" {
				return true
			}
		}
	}
	return false
}
