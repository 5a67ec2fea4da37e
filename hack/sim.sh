#!/usr/bin/env bash
# sim.sh runs the simulator's seeded sweep in PROCS processes at once (one
# per core), each over its own range of the seeds, and prints each
# process's report, then the whole sweep's seeds per minute and, for a
# scenario that counts cases (crds), in how many seeds each was reached.
# The seeds of one run share global state (the library's random source,
# apimachinery's error handlers), so a process runs its seeds one after
# another; two processes use two cores. It fails if any process failed.
#
# A seed's live heap is small (a process stays under 100 MB) but it
# allocates fast, so at Go's default GOGC=100 the collector takes about a
# fifth of the CPU. GOGC=400 trades some memory for it: the same seeds,
# schedules and checks for about a quarter less CPU a seed; and GOGC=off
# under a GOMEMLIMIT of 1 GiB (the default here, unless either is set)
# lets the collector run only as a process nears that limit, about a
# tenth less time again (two interleaved pairs of 40 sharded seeds,
# 0.91 and 0.92 of the time at GOGC=400, measured beside other work:
# not a quiet-machine figure). Two processes hold at most
# about 2 GiB; the sweep's watchdog stops one past 2 GiB (-seed-heap).
#
# Each process runs one seed at a time and PROCS processes share the
# cores, so GOMAXPROCS=1 (unless set): with more Ps than a process can
# keep busy, the idle ones spin looking for work and goroutines are
# handed between threads (findRunnable, futex, usleep in a profile),
# CPU the other processes could use (about a third of a sharded seed's).
# Beside heavy load from other work, one thread a process gets a smaller
# share of the machine; set GOMAXPROCS to choose. One P runs one goroutine at a
# time, so the runtime picks other interleavings among goroutines that
# wake at one simulated instant; with the bugs of docs/18 put back, the
# sweep found them no later (see that chapter). A failing seed's
# replay command sets the same GOMAXPROCS.
#
#   hack/sim.sh bin/sim.test SEEDS FIRST PROCS [test flags...]
set -uo pipefail
bin=$(realpath "$1") seeds=$2 first=$3 procs=$4
shift 4
if [[ -z ${GOGC:-} && -z ${GOMEMLIMIT:-} ]]; then
	export GOGC=off GOMEMLIMIT=1GiB
fi
export GOMAXPROCS=${GOMAXPROCS:-1}
per=$(( (seeds + procs - 1) / procs ))
start=$(date +%s%N)
pids=() logs=()
for (( i = 0; i < procs; i++ )); do
	from=$(( first + i * per ))
	n=$(( seeds - i * per ))
	(( n > per )) && n=$per
	(( n <= 0 )) && break
	log=$(mktemp)
	logs+=("$log")
	(cd simulation && "$bin" -test.run 'TestSimulate$' -test.v -test.count=1 -test.timeout 60m \
		-first="$from" -seeds="$n" "$@") >"$log" 2>&1 &
	pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
	wait "$pid" || failed=1
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
ran=0
coverage=""
for log in "${logs[@]}"; do
	cat "$log"
	n=$(awk '/ seeds in .* seeds\/minute/ { for (i = 1; i < NF; i++) if ($(i+1) == "seeds") { print $i; exit } }' "$log")
	ran=$(( ran + ${n:-0} ))
	coverage+=$(grep -o 'coverage: .*' "$log")$'\n'
	rm -f "$log"
done
echo "sweep: $ran seeds from $first in $(( ms / 1000 )) s over ${#pids[@]} processes: $(( ran * 60000 / (ms > 0 ? ms : 1) )) seeds/minute"
# The processes' coverage lines ("coverage: K of N seeds: case"), added up.
printf '%s' "$coverage" | awk -F': ' '/^coverage: / { split($2, a, " "); k[$3] += a[1]; n[$3] += a[3] }
	END { for (c in k) printf "sweep coverage: %d of %d seeds (%.0f%%): %s\n", k[c], n[c], 100 * k[c] / n[c], c }' | sort -t: -k3
exit "$failed"
