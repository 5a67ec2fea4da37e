# The commands a contributor and CI use. README.md explains each.
GO ?= go

.PHONY: tools test vet fuzz cluster demo

# tools builds etcd and kube-apiserver from pinned modules (about 10 minutes
# the first time on 2 cores, cached under ~/.cache afterwards) into bin/.
tools:
	hack/build-tools.sh

# vet fails on anything go vet or gofmt would change.
vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi

# test runs every unit and integration test with the race detector, one
# package at a time (-p 1) so that control planes never compete for the
# machine's cores and latency assertions stay meaningful.
test: tools vet
	$(GO) test -race -p 1 -count=1 -timeout 30m ./...

# fuzz runs every fuzz target for FUZZTIME each (their seed corpora
# already run as part of `make test`).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseKey -fuzztime=$(FUZZTIME) .
	$(GO) test -run='^$$' -fuzz=FuzzDeltaFIFOOperations -fuzztime=$(FUZZTIME) ./deltafifo
	$(GO) test -run='^$$' -fuzz=FuzzQueueOperations -fuzztime=$(FUZZTIME) ./workqueue
	$(GO) test -run='^$$' -fuzz=FuzzListBody -fuzztime=$(FUZZTIME) ./chaos
	$(GO) test -run='^$$' -fuzz=FuzzWatchStream -fuzztime=$(FUZZTIME) ./chaos

# cluster runs the local control plane in the foreground and writes
# bin/kubeconfig; Ctrl-C stops it.
cluster: tools
	$(GO) run ./internal/cmd/cluster

# demo starts the local control plane (watch cache off), runs the event
# trace, the controller and a small lab comparison against it, prints where
# to go next and stops everything: about two minutes once tools are built.
demo: tools
	$(GO) run ./internal/cmd/demo
