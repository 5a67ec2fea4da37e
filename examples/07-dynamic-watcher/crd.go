package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdsResource is where the API server keeps CustomResourceDefinitions.
// The example reads them as unstructured objects, so that it needs no Go
// types of the apiextensions API: only the few fields below.
var crdsResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// servedResource is the resource an informer should watch for crd, or
// the zero value and why none: the CRD is deleted or being deleted, not
// established yet, or serves no version. Of the versions it serves, the
// storage version is preferred (what a CRD's author moves to), then the
// first listed.
func servedResource(crd *unstructured.Unstructured) (schema.GroupVersionResource, string) {
	if crd == nil {
		return schema.GroupVersionResource{}, "CRD deleted"
	}
	if crd.GetDeletionTimestamp() != nil {
		return schema.GroupVersionResource{}, "CRD being deleted"
	}
	if !established(crd) {
		return schema.GroupVersionResource{}, "CRD not established yet"
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	chosen := ""
	for _, v := range versions {
		v, ok := v.(map[string]any)
		if !ok || v["served"] != true {
			continue
		}
		name, _ := v["name"].(string)
		if chosen == "" || v["storage"] == true {
			chosen = name
		}
	}
	if chosen == "" {
		return schema.GroupVersionResource{}, "CRD serves no version"
	}
	return schema.GroupVersionResource{Group: group, Version: chosen, Resource: plural}, ""
}

// established reports the CRD's Established condition: its resource is
// served from then on.
func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}

// describe names a resource as people read it: "widgets.example.com/v1".
func describe(gvr schema.GroupVersionResource) string {
	return fmt.Sprintf("%s.%s/%s", gvr.Resource, gvr.Group, gvr.Version)
}
