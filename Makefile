# The commands a contributor and CI use. README.md explains each.
GO ?= go

.PHONY: tools browser test test-loaded vet fuzz cluster demo bench scale chaos-replicas sharded sim

# tools builds etcd and kube-apiserver from pinned modules (the first time
# about 7 minutes on a quiet 2-core machine, up to 30 on a busy one; cached
# under ~/.cache afterwards) and links them into bin/. Outside this
# repository the same step is
# `go run github.com/listwatch/informer/cmd/controlplane build`.
tools:
	$(GO) run ./cmd/controlplane build -link bin

# browser installs Debian's chromium if it is missing (the live view's
# browser test drives it).
browser:
	hack/ensure-chromium.sh

# vet fails on anything go vet or gofmt would change, in every module.
vet:
	hack/each-module.sh $(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi

# test runs every unit and integration test of every module with the race
# detector, four packages at a time (-p 4, builds included): much of the
# suite still waits on real API servers and processes, and with two at a
# time the two cores were busy little more than half the time (13 min 6 s
# of wall time for 14 min 43 s of CPU; with four, 9 min 3 s); no test may
# depend on an idle machine anyway (see test-loaded). -vet=off: the full
# go vet has just run (the vet target); go test's own pass would repeat a
# subset of it for every package.
TESTFLAGS ?= -race -p 4 -count=1 -vet=off -timeout 30m
test: tools browser vet
	hack/each-module.sh $(GO) test $(TESTFLAGS) ./...

# test-loaded runs the suite ROUNDS times in a row (default 3) with a busy
# loop on one of the two cores, and fails at the first round that fails.
test-loaded: tools browser vet
	hack/loaded.sh hack/each-module.sh $(GO) test $(TESTFLAGS) ./...

# fuzz runs every fuzz target for FUZZTIME each (their seed corpora
# already run as part of `make test`).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseKey -fuzztime=$(FUZZTIME) .
	$(GO) test -run='^$$' -fuzz=FuzzDeltaFIFOOperations -fuzztime=$(FUZZTIME) ./deltafifo
	$(GO) test -run='^$$' -fuzz=FuzzQueueOperations -fuzztime=$(FUZZTIME) ./workqueue
	$(GO) test -run='^$$' -fuzz=FuzzDecodeProtobufList -fuzztime=$(FUZZTIME) ./reflector
	$(GO) test -run='^$$' -fuzz=FuzzDecodeJSONList -fuzztime=$(FUZZTIME) ./reflector
	$(GO) test -run='^$$' -fuzz=FuzzDecodeCBORList -fuzztime=$(FUZZTIME) ./reflector
	cd chaos && $(GO) test -run='^$$' -fuzz=FuzzListBody -fuzztime=$(FUZZTIME) .
	cd chaos && $(GO) test -run='^$$' -fuzz=FuzzWatchStream -fuzztime=$(FUZZTIME) .

# cluster runs the local control plane in the foreground and writes
# bin/kubeconfig; Ctrl-C stops it.
cluster: tools
	$(GO) run ./cmd/controlplane run

# bench runs bench/: the parts (queue, store, lister, fan-out, DeltaFIFO,
# the decode of one list) through this library and through
# client-go v0.37.2 side by side in one run (BENCH_FULL=1 adds the large
# sizes), compares them with benchstat, and regenerates
# docs/13-benchmarks.md and its charts from the results. client-go's feature
# gates are pinned (the bench package's TestMain pins the same values).
BENCHTIME ?= 300ms
BENCHSTAT ?= golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench: tools
	@mkdir -p bin
	cd bench && KUBE_FEATURE_AtomicFIFO=true KUBE_FEATURE_InOrderInformers=true \
	KUBE_FEATURE_InOrderInformersBatchProcess=true KUBE_FEATURE_UnlockWhileProcessingFIFO=true \
	KUBE_FEATURE_WatchListClient=true KUBE_FEATURE_InformerResourceVersion=true \
	KUBE_FEATURE_ClientsAllowCBOR=false KUBE_FEATURE_ClientsPreferCBOR=false \
	BENCH_FULL=$(BENCH_FULL) $(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) \
		-timeout 60m . > ../bin/bench.txt || { cat ../bin/bench.txt; exit 1; }
	cat bin/bench.txt
	$(GO) run $(BENCHSTAT) -col /impl -filter '/impl:(ours OR clientgo)' bin/bench.txt > bin/benchstat.txt
	cd bench && $(GO) run ./cmd/benchdoc -benchstat ../bin/benchstat.txt

# demo starts the local control plane (watch cache off), runs the event
# trace, the controller and a small lab comparison against it, prints where
# to go next and stops everything: about a minute once tools are built.
demo: tools
	cd examples && $(GO) run ./demo

# scale runs the scale ladder (bench/scale): initial sync, heap, relist,
# store contention and apiserver cost, ours and client-go interleaved, at
# 1k, 10k and 100k objects on the local control plane and up to 1M
# in-process, and rewrites the tables of docs/17-at-scale/results.md and
# its charts. About 37 minutes on 2 cores (measured), plus seven minutes the
# first time to populate an etcd per size (kept in
# ~/.cache/listwatch-informer/scale).
# QUICK=1: up to 10k objects, three pairs per row, for iterating.
scale: tools
	cd bench && $(GO) build -o ../bin/scale ./cmd/scale
	cd bench && ../bin/scale $(if $(QUICK),-quick) -results ../docs/17-at-scale/results.md

# chaos-replicas runs the replica checker (chaos/replicas) for SEEDS seeds
# from CHAOS_SEED (default 1), each with DURATION of faults, and writes
# the table of runs to bin/chaos-replicas.md (about 2.5 minutes a seed).
SEEDS ?= 30
DURATION ?= 2m
chaos-replicas: tools
	@mkdir -p bin
	cd chaos && $(GO) test -race -count=1 -timeout 180m -run TestReplicaGuarantees ./replicas -v \
		-seeds=$(SEEDS) -duration=$(DURATION) -report=$(CURDIR)/bin/chaos-replicas.md

# sharded runs the sharded example's handover test (examples/sharded)
# with -race at OBJECTS ConfigMaps: 3,000 by default, the size whose run
# docs/16-sharding.md quotes; make test runs it at 1,500. The program's
# own full size (30,000) is `go run ./sharded` against make cluster.
OBJECTS ?= 3000
sharded: tools
	cd examples && $(GO) test -race -count=1 -timeout 60m -run TestEveryHandover ./sharded -v -args -objects=$(OBJECTS)

# sim runs the simulator (package simulation) for SEEDS seeds from
# SIM_FIRST (default 1), scenario SCENARIO (sharded, leader or crds), each with
# FAULTS of faults (and, if TIMING is set, that Lease timing,
# LEASE/RENEW/RETRY such as 15s/10s/2s), without -race, in SIM_PROCS processes at once (one per
# core, each over its own part of the seeds, at GOGC=off under a 1 GiB
# GOMEMLIMIT and GOMAXPROCS=1:
# see hack/sim.sh), and prints each process's
# seeds per minute and simulated-to-real ratio, then the sweep's seeds per
# minute. A failing seed prints its replay command, schedule and history,
# and its shrunk schedule. The sweep's test is built only with the
# simsweep tag, so make test does not run it.
SIM_FIRST ?= 1
SIM_PROCS ?= 2
SCENARIO ?= sharded
FAULTS ?= 30s
sim:
	@mkdir -p bin
	$(GO) test -tags simsweep -c -o bin/sim.test ./simulation
	hack/sim.sh bin/sim.test $(SEEDS) $(SIM_FIRST) $(SIM_PROCS) -scenario=$(SCENARIO) -faults=$(FAULTS) $(if $(TIMING),-timing=$(TIMING))
