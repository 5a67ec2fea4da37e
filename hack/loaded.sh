#!/usr/bin/env bash
# loaded.sh runs a command ROUNDS times in a row (default 3) with a busy
# loop on one core, and fails at the first round that fails: no test may
# depend on an idle machine. The busy loop is a shell loop, so nothing
# needs installing, and it is ended however this script ends.
#
#   hack/loaded.sh hack/each-module.sh go test -race ./...   (what make test-loaded runs)
set -euo pipefail
rounds="${ROUNDS:-3}"
( while :; do :; done ) &
hog=$!
trap 'kill "$hog" 2>/dev/null || true' EXIT
for i in $(seq 1 "$rounds"); do
	echo "==> loaded round $i of $rounds (a busy loop on one core)"
	start=$(date +%s)
	"$@"
	echo "==> loaded round $i passed in $(( $(date +%s) - start )) s"
done
