// Command syncpair times one initial sync of ConfigMaps, this library's
// against client-go's, the way an outside harness does: its own objects
// (~1 KiB of random, hardly compressible text each, in ten namespaces),
// one child process per sample, pairs interleaved with the order
// alternating, each library at the defaults its front door gives
// (InformerFor; client-go's SharedInformerFactory). It is the check the
// scale ladder (make scale) was not tuned to.
//
// With -shape widgets it syncs a custom resource instead: the scale
// ladder's Widgets (scale.Widget), created the ladder's way, its CRD
// first, each carrying a ConfigMap's ~1 KiB, read as JSON. Their
// variants are the ladder's own informers (scale.Start), named
// library-kind: ours and client-go (a Go type; client-go's as
// controller-runtime builds it), ours-unstructured and client-go-dynamic,
// ours-metadata and client-go-metadata.
//
// With -cbor-gate the control plane runs, for the whole run, with
// kube-apiserver's CBORServingAndStorage gate on, so that it answers
// CBOR to whoever offers it (KEP-4222). Variants then compare the
// encodings on the same server: ours-unstructured-cbor, the factory's
// default (CBOR offered first), and ours-unstructured-json, the same
// informer with WithJSON; client-go-dynamic-cbor, client-go's dynamic
// informer in a child run with KUBE_FEATURE_ClientsAllowCBOR=true, beside
// client-go-dynamic as it ships. Each named after an encoding must be
// answered in it, or its sample is an error; the CBOR ones need
// -cbor-gate.
//
// For each sample it records the time to synced, the CPU the child
// process used, the apiserver's CPU meanwhile, the machine's load before
// it and the user CPU other processes took meanwhile (a variant with a
// sample above a tenth of a core is not judged), the live heap per cached
// object, the peak live heap during the sync over that steady heap, and
// the request that carried the list (URL, Accept, the answer's
// Content-Type and encoding), so a reader sees what each library actually
// asked for. With -record FILE it also writes all of it as a markdown
// record, which chapter 17 and README quote. With -profile DIR each child writes a CPU profile.
//
// With -relists N each child instead syncs, relists N times after an
// injected 410, and reports its relists' medians: of ConfigMaps, the
// kinds scale.RelistKinds names; of Widgets, those scale.WidgetRelistKinds
// names, each as its sync variant of the same name (no floor).
//
//	cd bench && go run ./cmd/syncpair -n 100000 -pairs 5 -profile /tmp/prof
//	cd bench && go run ./cmd/syncpair -shape widgets -n 100000 -pairs 5 \
//		-variants ours-metadata,client-go-metadata
//	cd bench && go run ./cmd/syncpair -shape widgets -cbor-gate -n 100000 -pairs 5 \
//		-variants ours-unstructured-cbor,client-go-dynamic-cbor,client-go-dynamic,ours-unstructured-json
//	cd bench && go run ./cmd/syncpair -shape widgets -relists 3 -n 100000 -pairs 3 \
//		-variants ours,ours-unstructured,ours-metadata,client-go-metadata,client-go-dynamic,client-go
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/listwatch/informer/bench/scale"
)

func main() {
	child := flag.String("child", "", "run one sync of this variant and print the sample as JSON (used by the parent)")
	kubeconfig := flag.String("kubeconfig", "", "with -child: the control plane to sync from")
	shape := flag.String("shape", scale.ConfigMaps, "the objects to sync: "+scale.ConfigMaps+", or "+scale.Widgets+" (a custom resource, created with its CRD the scale ladder's way, each carrying a ConfigMap's ~1 KiB of random payload)")
	n := flag.Int("n", 100_000, "objects to sync")
	pairs := flag.Int("pairs", 5, "samples of each variant")
	variants := flag.String("variants", "ours,client-go", "variants to compare, the last against the first; of "+scale.ConfigMaps+": "+strings.Join(variantNames(scale.ConfigMaps), ", ")+"; of "+scale.Widgets+": "+strings.Join(variantNames(scale.Widgets), ", "))
	profile := flag.String("profile", "", "directory for one CPU profile per sample")
	payload := flag.String("payload", "random", "the ConfigMaps' data: random (hardly compressible) or repeated (the scale ladder's one text, which gzip shrinks to almost nothing); widgets are always random")
	record := flag.String("record", "", "also write the samples and the table, with the command and the date, to this markdown file (a record docs may quote)")
	relists := flag.Int("relists", 0, "instead of timing the initial sync, relist each child's informer this many times after an injected 410 and time the relists (variants of "+scale.ConfigMaps+": "+strings.Join(scale.RelistKindsOf(scale.ConfigMaps), ", ")+"; of "+scale.Widgets+": "+strings.Join(scale.RelistKindsOf(scale.Widgets), ", ")+")")
	cborGate := flag.Bool("cbor-gate", false, "start the control plane with --feature-gates=CBORServingAndStorage=true for the whole run, so that it answers CBOR to whoever offers it (-shape "+scale.Widgets+" only; ours-unstructured-cbor and client-go-dynamic-cbor need it)")
	before := flag.String("before", "", "a syncpair binary built from an earlier commit: adds the variant ours-before, its ours")
	flag.Usage = func() {
		out := flag.CommandLine.Output()
		_, _ = out.Write([]byte("syncpair: time an initial sync of ConfigMaps or Widgets (or relists), ours against client-go, in a child process per sample with its own objects\n\n"))
		flag.PrintDefaults()
	}
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *child != "" {
		if err := runChild(ctx, *shape, *child, *kubeconfig, *n, *relists, *profile); err != nil {
			log.Fatal(err)
		}
		return
	}
	names := strings.Split(*variants, ",")
	if *before != "" {
		names = append([]string{"ours-before"}, names...)
	}
	if *payload != "random" && *payload != "repeated" {
		log.Fatalf("syncpair: -payload %q: want random or repeated", *payload)
	}
	r := pairsRun{shape: *shape, n: *n, pairs: *pairs, relists: *relists, names: names, profileDir: *profile, before: *before, repeated: *payload == "repeated", record: *record, cborGate: *cborGate}
	if err := runPairs(ctx, r); err != nil {
		log.Fatal(err)
	}
}
