package main

import (
	"bytes"
	"context"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/bench/scale"
)

// widgetVariants are the informers a sample of -shape widgets can time,
// each of every Widget in the cluster and each library at its defaults:
// the scale ladder's own (scale.Start), named library-kind as the relist
// kinds are. The default pair, ours and client-go, is the typed one.
var widgetVariants = map[string]variant{
	"ours":               widgets(scale.Ours, scale.Typed),
	"ours-unstructured":  widgets(scale.Ours, scale.Unstructured),
	"ours-metadata":      widgets(scale.Ours, scale.PartialMetadata),
	"client-go":          widgets(scale.ClientGo, scale.Typed),
	"client-go-dynamic":  widgets(scale.ClientGo, scale.Unstructured),
	"client-go-metadata": widgets(scale.ClientGo, scale.PartialMetadata),
	"floor":              floor(scale.Widgets, `"kind":"Widget"`),
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
