#!/usr/bin/env bash
# each-module.sh runs one go command in every module of this repository,
# with GOWORK=off so each builds exactly as it would for someone else, and
# fails at the end if any failed (every module still runs).
#
#   hack/each-module.sh go test -race ./...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The library, then the nested modules whose dependencies (the Prometheus
# client, chromedp, gonum, client-go's own cache for comparison) must never
# reach a consumer, then the consumer module that proves it.
modules=(. metrics/prometheus examples bench chaos consumer bench/footprint/baseline)

failed=()
for m in "${modules[@]}"; do
	echo "==> $m: $*"
	(cd "$m" && GOWORK=off "$@") || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed in: ${failed[*]}" >&2
	exit 1
fi
