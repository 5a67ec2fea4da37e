package scale

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// This file is how the ladder reaches each shape's collection: its
// resource, its path, and a REST client in the cheapest encoding the
// shape has. ConfigMaps and Pods are core/v1, read as protobuf; Widgets
// are a custom resource, read as JSON (a CRD has no protobuf).

// checkShape returns an error naming the shapes for anything else.
func checkShape(shape string) error {
	switch shape {
	case ConfigMaps, Pods, Widgets:
		return nil
	}
	return fmt.Errorf("scale: no shape %q (want %q, %q or %q)", shape, ConfigMaps, Pods, Widgets)
}

// gvr is the resource that serves shape.
func gvr(shape string) schema.GroupVersionResource {
	if shape == Widgets {
		return WidgetsResource
	}
	return corev1.SchemeGroupVersion.WithResource(shape)
}

// collectionPath is the URL path of shape's collection in every
// namespace: /api/v1/configmaps, /apis/bench.listwatch.dev/v1/widgets.
func collectionPath(shape string) string {
	if shape == Widgets {
		return "/apis/" + WidgetGroupVersion.String() + "/" + Widgets
	}
	return "/api/v1/" + shape
}

// encodingOf is the cheapest encoding shape is served in, as clientFor
// reads it.
func encodingOf(shape string) string {
	if shape == Widgets {
		return "JSON"
	}
	return "protobuf"
}

// clientFor is a REST client for shape's group and version in its
// cheapest encoding (encodingOf), decoding with the package's scheme.
func clientFor(cfg *rest.Config, shape string) (*rest.RESTClient, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if shape == Widgets {
		return jsonClient(cfg, WidgetGroupVersion)
	}
	return coreClient(cfg, true)
}

// jsonClient is a REST client for gv under /apis, in JSON, decoding with
// the package's scheme: what controller-runtime builds for a custom
// resource's Go type.
func jsonClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	return rest.RESTClientFor(cfg)
}
