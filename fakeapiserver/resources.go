package fakeapiserver

import (
	"fmt"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource describes one served resource: where it lives in the API, what
// its objects are called, and whether it is built in (served as protobuf
// too, from a Go type in the server's scheme) or custom (JSON only, any
// fields, as a CustomResourceDefinition serves it).
type Resource struct {
	// GroupVersionResource is the resource's path: group "" is the core
	// group under /api, any other group lives under /apis.
	schema.GroupVersionResource
	// Kind and ListKind name its objects and its lists.
	Kind, ListKind string
	// Namespaced resources live under /namespaces/<ns>/; the others are
	// cluster-scoped.
	Namespaced bool
	// Custom marks a custom resource: JSON only, a PUT must carry a
	// resourceVersion, and created objects get metadata.generation.
	Custom bool
	// CreateOnUpdate lets a PUT to a missing object create it, as Leases'
	// strategy (AllowCreateOnUpdate) does. ConfigMaps and custom resources
	// answer 404 instead.
	CreateOnUpdate bool
	// ConditionalUpdateOnly refuses a PUT of an existing object without a
	// resourceVersion (422), as Leases' strategy does
	// (AllowUnconditionalUpdate false); custom resources always do.
	ConditionalUpdateOnly bool
}

// GVK is the resource's GroupVersionKind.
func (r Resource) GVK() schema.GroupVersionKind { return r.GroupVersion().WithKind(r.Kind) }

// BuiltIns are the built-in resources every Server serves: what this
// library's examples, leader election and sharding use.
func BuiltIns() []Resource {
	core := func(plural, kind string, namespaced bool) Resource {
		return Resource{GroupVersionResource: corev1.SchemeGroupVersion.WithResource(plural), Kind: kind, ListKind: kind + "List", Namespaced: namespaced}
	}
	return []Resource{
		core("namespaces", "Namespace", false),
		core("configmaps", "ConfigMap", true),
		core("secrets", "Secret", true),
		core("pods", "Pod", true),
		core("services", "Service", true),
		{GroupVersionResource: coordinationv1.SchemeGroupVersion.WithResource("leases"), Kind: "Lease", ListKind: "LeaseList", Namespaced: true, CreateOnUpdate: true, ConditionalUpdateOnly: true},
	}
}

// builtInScheme knows the Go types of BuiltIns, and the meta types every
// group version carries (Status, WatchEvent, ListOptions).
func builtInScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = coordinationv1.AddToScheme(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	_ = metav1.AddMetaToScheme(s)
	return s
}

// CRD describes a custom resource for InstallCRD, like the fields of a
// CustomResourceDefinition this library's tests use (testenv.CRD).
type CRD struct {
	Group, Version, Kind string
	Plural               string // the resource name; nothing derives it from Kind
	ClusterScoped        bool
}

func (c CRD) resource() Resource {
	return Resource{
		GroupVersionResource: schema.GroupVersionResource{Group: c.Group, Version: c.Version, Resource: c.Plural},
		Kind:                 c.Kind, ListKind: c.Kind + "List",
		Namespaced: !c.ClusterScoped, Custom: true,
	}
}

// qualified names a resource in errors as kube-apiserver does:
// "leases.coordination.k8s.io", "configmaps".
func qualified(gr schema.GroupResource) string { return gr.String() }

// path is the resource's collection path for a namespace ("" for all, or
// for a cluster-scoped resource).
func (r Resource) path(namespace string) string {
	var b strings.Builder
	if r.Group == "" {
		fmt.Fprintf(&b, "/api/%s", r.Version)
	} else {
		fmt.Fprintf(&b, "/apis/%s/%s", r.Group, r.Version)
	}
	if namespace != "" && r.Namespaced {
		fmt.Fprintf(&b, "/namespaces/%s", namespace)
	}
	b.WriteString("/" + r.Resource)
	return b.String()
}
