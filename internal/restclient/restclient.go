// Package restclient builds the rest.RESTClient every REST ListerWatcher
// and the factory's write clients use: one API group and version, the
// serializer that decodes what it reads, and the right content types.
package restclient

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// New is the part of client-go's clientset construction we keep: a
// rest.RESTClient for one group/version with a serializer that decodes
// what that client reads. cfg is copied, not modified. protobuf asks for
// protobuf responses (JSON is still accepted) and sends protobuf bodies.
func New(cfg *rest.Config, gv schema.GroupVersion, codecs runtime.NegotiatedSerializer, protobuf bool) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api" // the core group ("legacy") lives under /api/v1
	}
	cfg.NegotiatedSerializer = codecs
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	if protobuf {
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(cfg)
}
