// Package scale is the scale ladder: the same workloads through this
// library and client-go v0.37.2, side by side, at 1k, 10k and 100k
// objects served by the local control plane and up to 1M in-process,
// judged with confidence intervals against the goals docs/17-at-scale.md
// lists (Goals: initial sync, heap per object, store throughput and
// relist, each against client-go's). `make scale`
// runs it (bench/cmd/scale) and writes the tables and charts of
// docs/17-at-scale/results.md; `make test` runs it at 1k, one pair per row, so it cannot rot.
//
// # What it measures
//
//   - initial sync, from start to synced, for each library's defaults
//     (our Factory, client-go's SharedInformerFactory), for the same
//     encoding and list semantics built from the parts (streaming JSON,
//     LIST at resourceVersion "0" in JSON), and with transforms that strip
//     managedFields or keep only metadata; for ~1 KiB ConfigMaps and
//     Deployment-made Pods; with the watch cache on and off;
//   - the same for a custom resource: Widgets (Widget, served by a CRD
//     with a structural schema), each carrying the i-th ConfigMap's
//     labels and payload, in three variants named after the Go type
//     both libraries cache: typed (our InformerFor[*Widget]; client-go's
//     informer over a typed REST client, as controller-runtime builds
//     it) and unstructured (ForResource; dynamicinformer), read as JSON,
//     and partial-metadata (ForResource; metadatainformer), which both
//     libraries read in protobuf;
//   - the live heap each informer adds per cached object, after a GC;
//   - the apiserver's CPU-seconds and peak RSS during each sync (/proc),
//     so a client win that moves work to the server shows;
//   - a relist, from the library's first request for the list after an
//     injected 410 until every object is in the cache again, and the peak
//     live heap meanwhile (what each GC found live) over the heap before;
//   - a store with one writer and 0, 1 or 10 readers listing namespaces;
//   - an in-process sync from encoded pages, each run in a process of its
//     own, to 1M objects;
//   - beside them, the raw-bytes floor: one unpaged LIST of each shape in
//     its cheapest encoding (protobuf; JSON for Widgets), read to the end
//     and not decoded.
//
// # How it judges
//
// Ours and client-go run interleaved, alternating which goes first, with
// a forced GC before each run. Every control-plane sync runs in a process
// of its own (Config.SyncChild, RunSync), which reports its time, its CPU,
// its heap and the request that carried its list (RequestLog); the ladder
// measures the apiserver and the other processes around it. A row's ratio is the geometric mean of the
// per-pair ratios with a 95% Student's t interval on their logarithms
// (PairedRatio). A row wider than ±10% is inconclusive and never counts
// as a goal met (Ratio.AtMost, AtLeast, NotWorse). Growth with N is the
// exponent of a power law fitted on log-log axes, flagged above 1.1
// (FitSlope).
//
// Each size is served by a control plane of its own, whose objects are
// spread over ten namespaces (ns-0 … ns-9), and every informer lists
// every namespace, as each library's factory does by default. Each
// size's populated etcd (100k ConfigMaps and 100k Pods take about 5
// minutes to create on 2 cores; Widgets, with their CRD, come on top)
// is saved once under the user's cache directory and every control
// plane starts on a copy (testenv.Options.EtcdDataFrom); the ladder
// waits until a copy's apiserver serves the CRD again. One creation
// path makes every shape (Populate); syncpair -shape widgets uses it
// too, and times the ladder's own informers (Start).
package scale
