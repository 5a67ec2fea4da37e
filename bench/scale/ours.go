package scale

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// buildOurs builds our informer of s in ns, built as v says, with a
// handler that calls seen once per add or update.
func buildOurs[T informer.Object](ctx context.Context, cfg *rest.Config, s shape[T], ns string, v Variant, seen func()) (running, error) {
	if v == StreamJSON || v == ListJSON {
		lw, err := reflector.NewTypedListerWatcher[T](cfg, scheme, reflector.Source{Resource: gvr(s.resource), Namespace: ns})
		if err != nil {
			return running{}, err
		}
		tuning := reflector.Tuning{StreamingList: true}
		if v == ListJSON {
			tuning = reflector.Tuning{InitialList: reflector.ListAny}
		}
		return buildOursFrom(ctx, lw, tuning, nil, seen)
	}
	// No WithIndexers: our informers always index by namespace, as
	// client-go's factory informers do.
	opts := []sharedinformer.InformerOption{sharedinformer.InNamespace(ns)}
	if t := transformFor(s, v); t != nil {
		opts = append(opts, sharedinformer.WithTransform(func(obj T) (T, error) { return t(obj), nil }))
	}
	return buildOursFactory[T](ctx, cfg, seen, opts...)
}

// buildOursFactory builds our informer of T from a Factory at its
// defaults (the package's scheme, which knows core/v1 and Widget), with
// opts, and a handler that calls seen once per add or update.
func buildOursFactory[T informer.Object](ctx context.Context, cfg *rest.Config, seen func(), opts ...sharedinformer.InformerOption) (running, error) {
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme, OnError: func(error) {}})
	if err != nil {
		return running{}, err
	}
	inf, err := sharedinformer.InformerFor[T](ctx, f, opts...)
	if err != nil {
		return running{}, err
	}
	if err := addOursHandler(inf, seen); err != nil {
		return running{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	return running{
		start:  func() { f.Start(ctx) },
		synced: inf.Synced(),
		len:    inf.Indexer().Len,
		stop:   func() { cancel(); f.Wait() },
	}, nil
}

// buildOursFrom builds our informer over lw, from the parts, with trace
// as its Options.Trace.
func buildOursFrom[T informer.Object](ctx context.Context, lw reflector.ListerWatcher[T], tuning reflector.Tuning, trace informer.TraceHook, seen func()) (running, error) {
	inf, err := sharedinformer.New(sharedinformer.Options[T]{
		ListerWatcher: lw,
		Reflector:     tuning,
		Trace:         trace,
		OnError:       func(error) {},
	})
	if err != nil {
		return running{}, err
	}
	if err := addOursHandler(inf, seen); err != nil {
		return running{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	return running{
		start:  func() { go func() { defer close(done); _ = inf.Run(ctx) }() },
		synced: inf.Synced(),
		len:    inf.Indexer().Len,
		stop:   func() { cancel(); <-done },
	}, nil
}

func addOursHandler[T informer.Object](inf *sharedinformer.Informer[T], seen func()) error {
	if seen == nil {
		return nil
	}
	_, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[T]{
		AddFunc:    func(T, bool) { seen() },
		UpdateFunc: func(_, _ T) { seen() },
	})
	return err
}
