#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where each thread's CPU goes once the frames flow (docs/benchmarks.md,
# Where the time goes): runs cudaipc-bench under `perf record -g`, with
# the recording held back for the start-up (process start, CUDA context
# creation, which otherwise fill the profile), then lists the threads by
# their share of the samples and summarises the heaviest with
# perf-threads.py: by shared object and by symbol, self time.
#
#   tests/bench/perf-steady.sh OUTDIR [cudaipc-bench run options]
#
# Default options: --transports floor,cudaipc --resolutions 4k
# --consumers 8 --rates 0 --frames 400000 --seconds 7 --timeout 60; the
# rows run one after another, so with the default delay the recording
# covers the end of the floor's row and the whole of ours.
#
# Environment: BUILD_DIR (default build), PERF (the perf command, default
# perf), PERF_DELAY_MS (6000), PERF_FREQ (2999), THREADS (how many of each
# kind to summarise, default 3). Needs GStreamer on the paths (a kit's
# env.sh sourced first) and perf allowed to sample (perf_event_paranoid).
# Where the machine has no hardware counters (a virtual machine), perf
# samples on a timer (cpu-clock) and a sample can land on the instruction
# after a slow one: read a trivial function's share as its neighbour's.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: perf-steady.sh OUTDIR [cudaipc-bench run options]" >&2; exit 2; }
out=$1
shift
mkdir -p "$out"
build=${BUILD_DIR:-build}
[ "${build#/}" = "$build" ] && build="$root/$build"
perf=${PERF:-perf}
args=("$@")
# shellcheck disable=SC2054 # a comma-separated value, one argument
[ ${#args[@]} -gt 0 ] || args=(--transports floor,cudaipc --resolutions 4k
  --consumers 8 --rates 0 --frames 400000 --seconds 7 --timeout 60)
export GST_PLUGIN_PATH="$build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

$perf record -F "${PERF_FREQ:-2999}" -g -D "${PERF_DELAY_MS:-6000}" \
  -o "$out/perf.data" -- "$build/tests/bench/cudaipc-bench" run "${args[@]}" \
  >"$out/bench.txt" 2>&1
rc=$?
grep -E '^\| |^cudaipc-bench: rows' "$out/bench.txt"
[ "$rc" = 0 ] || { echo "perf-steady: the benchmark ended with $rc (see $out/bench.txt)"; exit 1; }

$perf report -i "$out/perf.data" --stdio --no-children -g none \
  --sort pid,comm 2>/dev/null | grep -v '^#' | grep -v '^$' >"$out/threads.txt"
head -n 20 "$out/threads.txt"
n=${THREADS:-3}
tids=$(for comm in src:src cudaipc-bench cudaipc-server cudaipc-reader; do
  grep " $comm\$\| $comm " "$out/threads.txt" | head -n "$n"
done | awk '{print $2}' | cut -d: -f1 | sort -u)
files=()
for t in $tids; do
  $perf report -i "$out/perf.data" --stdio --no-children -g none --tid "$t" \
    --percentage relative --sort dso,sym --percent-limit 0.3 2>/dev/null |
    grep -v '^$' >"$out/tid-$t.txt"
  files+=("$out/tid-$t.txt")
done
[ ${#files[@]} -gt 0 ] && python3 "$root/tests/bench/perf-threads.py" --top 25 "${files[@]}"
