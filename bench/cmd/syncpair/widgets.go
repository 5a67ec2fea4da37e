package main

import (
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
