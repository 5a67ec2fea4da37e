package main

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/bench/scale"
	"github.com/listwatch/informer/sharedinformer"
)

// widgetVariants are the informers a sample of -shape widgets can time,
// each of every Widget in the cluster and each library at its defaults
// unless the name says otherwise: the scale ladder's own (scale.Start),
// named library-kind as the relist kinds are (scale.WidgetRelistKinds).
// The default pair, ours and client-go, is the typed one.
var widgetVariants = map[string]variant{
	"ours":              widgets(scale.Ours, scale.Typed),
	"ours-unstructured": widgets(scale.Ours, scale.Unstructured),
	// ours-unstructured-cbor is ours-unstructured, which offers CBOR
	// first (the factory's default), in a run whose server answers CBOR
	// (-cbor-gate); ours-unstructured-json asks for JSON alone
	// (WithJSON). Each must be answered in its encoding (answeredIn).
	"ours-unstructured-cbor": widgets(scale.Ours, scale.Unstructured),
	"ours-unstructured-json": oursUnstructuredJSON,
	"ours-metadata":          widgets(scale.Ours, scale.PartialMetadata),
	"client-go":              widgets(scale.ClientGo, scale.Typed),
	"client-go-dynamic":      widgets(scale.ClientGo, scale.Unstructured),
	// client-go-dynamic-cbor is client-go-dynamic in a child whose
	// client-go has its ClientsAllowCBOR gate on (childEnv), so that its
	// dynamic client offers CBOR first: client-go's side of
	// ours-unstructured-cbor.
	"client-go-dynamic-cbor": widgets(scale.ClientGo, scale.Unstructured),
	"client-go-metadata":     widgets(scale.ClientGo, scale.PartialMetadata),
	"floor":                  floor(scale.Widgets, `"kind":"Widget"`),
}

// encoding is an encoding a variant's list can be held to, by the media
// types of the answers that carry it: a LIST's, and a streaming list's
// (a WATCH's; JSON's says so in a parameter, stream=watch).
type encoding struct {
	name       string
	mediaTypes []string
}

var (
	cborEncoding = encoding{"CBOR", []string{"application/cbor", "application/cbor-seq"}}
	jsonEncoding = encoding{"JSON", []string{"application/json"}}
)

// answeredIn is the encoding each variant named after one must get its
// list in, or its sample is an error: a variant that offered CBOR and
// silently got JSON would otherwise be recorded as CBOR. It holds for
// relists too, whose first list is checked.
var answeredIn = map[string]encoding{
	"ours-unstructured-cbor": cborEncoding,
	"ours-unstructured-json": jsonEncoding,
	"client-go-dynamic-cbor": cborEncoding,
}

// childEnv is what a variant's child process adds to the parent's
// environment. client-go reads its feature gates from KUBE_FEATURE_*
// variables, once, as its users turn them on: ClientsAllowCBOR (alpha,
// off by default in 1.37) makes its dynamic client offer CBOR first.
var childEnv = map[string][]string{
	"client-go-dynamic-cbor": {"KUBE_FEATURE_ClientsAllowCBOR=true"},
}

// checkAnswer returns an error unless variant's list, the request the
// request log saw and its answer (scale.RequestLog.List), came in the
// encoding answeredIn holds it to; nil for a variant it does not name.
func checkAnswer(variant, request, answer string) error {
	want, ok := answeredIn[variant]
	if !ok {
		return nil
	}
	if request == "" {
		return fmt.Errorf("syncpair: %s must be answered in %s, but no request for its list was seen", variant, want.name)
	}
	contentType, _, _ := strings.Cut(answer, ",")
	got, _, err := mime.ParseMediaType(strings.TrimSpace(contentType))
	if err == nil && slices.Contains(want.mediaTypes, got) {
		return nil
	}
	err = fmt.Errorf("syncpair: %s must be answered in %s; %s was answered %q", variant, want.name, request, answer)
	if want.name == cborEncoding.name {
		err = fmt.Errorf("%w: kube-apiserver answers CBOR only with --feature-gates=CBORServingAndStorage=true, which -cbor-gate starts it with", err)
	}
	return err
}

// oursUnstructuredJSON is ours-unstructured with WithJSON: our informer
// of every Widget as unstructured objects, asking for JSON alone, as
// the factory did before it offered CBOR.
func oursUnstructuredJSON(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
	started, err := scale.StartOurs[*unstructured.Unstructured](ctx, cfg, sharedinformer.ForResource(scale.WidgetsResource), sharedinformer.WithJSON())
	if err != nil {
		return nil, nil, err
	}
	return started.HasSynced, started.Len, nil
}

// widgets is the variant that starts lib's informer of every Widget, as v
// says.
func widgets(lib string, v scale.Variant) variant {
	return func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		started, err := scale.Start(ctx, cfg, scale.Widgets, lib, v)
		if err != nil {
			return nil, nil, err
		}
		return started.HasSynced, started.Len, nil
	}
}

// floor is the raw floor as a variant: shape's whole unpaged LIST read
// to the end and not decoded (scale.RawList), synced once read. It
// counts its objects by how often item, which each object's JSON holds
// once, occurs in the body, after the sample's time has stopped.
func floor(shape, item string) variant {
	return func(ctx context.Context, cfg *rest.Config) (func() bool, func() int, error) {
		body, err := scale.RawList(ctx, cfg, shape)
		if err != nil {
			return nil, nil, err
		}
		return func() bool { return true }, func() int { return bytes.Count(body, []byte(item)) }, nil
	}
}
