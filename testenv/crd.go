package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CRD describes a CustomResourceDefinition for InstallCRD: one version,
// served and stored, whose objects may hold any fields.
type CRD struct {
	Group, Version, Kind string
	// Plural is the resource name, chosen by the CRD's author: nothing
	// derives it from Kind.
	Plural string
	// ClusterScoped makes the resource cluster-wide. Default: namespaced.
	ClusterScoped bool
}

// InstallCRD creates the CustomResourceDefinition, unless one of its name
// exists already, and returns once the apiserver serves its resource, or
// ctx ends.
func (cp *ControlPlane) InstallCRD(ctx context.Context, crd CRD) error {
	client, err := CoreV1Client(cp.Config())
	if err != nil {
		return err
	}
	scope := "Namespaced"
	if crd.ClusterScoped {
		scope = "Cluster"
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.Plural + "." + crd.Group},
		"spec": map[string]any{
			"group": crd.Group, "scope": scope,
			"names": map[string]any{"plural": crd.Plural, "kind": crd.Kind, "listKind": crd.Kind + "List"},
			"versions": []any{map[string]any{"name": crd.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	})
	if err != nil {
		return err
	}
	err = client.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: creating CRD %s.%s: %w", crd.Plural, crd.Group, err)
	}
	path := fmt.Sprintf("/apis/%s/%s/%s", crd.Group, crd.Version, crd.Plural)
	for {
		if client.Get().AbsPath(path).Do(ctx).Error() == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: CRD %s.%s created but never served: %w", crd.Plural, crd.Group, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DeleteCRD deletes the CustomResourceDefinition and returns once it is
// gone: the apiserver has deleted every object of it and stopped serving
// its resource. A CRD that does not exist is not an error.
func (cp *ControlPlane) DeleteCRD(ctx context.Context, crd CRD) error {
	client, err := CoreV1Client(cp.Config())
	if err != nil {
		return err
	}
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd.Plural + "." + crd.Group
	if err := client.Delete().AbsPath(path).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("testenv: deleting CRD %s.%s: %w", crd.Plural, crd.Group, err)
	}
	for {
		err := client.Get().AbsPath(path).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: CRD %s.%s deleted but still there (last answer: %v): %w", crd.Plural, crd.Group, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
