#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds the project (tests/build.sh, in $BUILD_DIR, default build) and runs
# the transport benchmark (docs/benchmarks.md): this plugin's
# cuipcsink/cuipcsrc, cudadownload ! shmsink / shmsrc ! cudaupload, and
# nvcodec's cudaipcsink/cudaipcsrc where GStreamer >= 1.24 has them (a row
# per ipc-mode, legacy and mmap), at 1080p and 4K NV12 with 1 and 4
# consumers. Prints the row count and an estimate of the time, then a
# Markdown table (with the fraction of frames delivered, and (a)'s frames/s
# and p50 over those of each (b) and (c) row), and writes every number,
# with the environment, to the results file.
#
#   tests/bench/run-bench.sh [RESULTS.json|RESULTS.tsv] [cudaipc-bench options]
#
# The results file defaults to bench-results.json in the current folder.
# Options after it go to `cudaipc-bench run`, e.g. --frames 1000,
# --consumers 1, --transports cudaipc,shm, --rates 0,1000 (flat out and
# paced, in one run), --nvcodec-ipc-modes mmap, --memory system, --verbose.
#
# Environment: BUILD_DIR (default build), CUDAIPC_NO_APT=1 (no apt-get:
# the GPU host has no package registry), MESON_SETUP_ARGS, BENCH_TIMEOUT
# (seconds for the whole run, default 3600; each row has its own limit,
# --timeout, default 120 s).
#
# On a GPU machine without GStreamer, with the kit in .gpuhost
# (docs/benchmarks.md, Reproducing):
#   . .gpuhost/env.sh
#   CUDAIPC_NO_APT=1 BUILD_DIR=build-gpu tests/bench/run-bench.sh bench-results.json
# (without the first line the script sources .gpuhost/env.sh itself when
# it finds no GStreamer and the kit is there).
#
# Exit status: cudaipc-bench's: 0, 3 when a row failed (the table and the
# results file say which and why), 124 when BENCH_TIMEOUT ran out.
set -euo pipefail

here=$(pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

out="bench-results.json"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  out=$1
  shift
fi
case $out in
  /*) ;;
  *) out="$here/$out" ;;
esac

if ! pkg-config --exists gstreamer-1.0 2>/dev/null && [ -f "$root/.gpuhost/env.sh" ]; then
  echo "run-bench: no GStreamer found here; using the packed kit (.gpuhost/env.sh)"
  # shellcheck disable=SC1091
  . "$root/.gpuhost/env.sh"
fi

cd "$root"
build=${BUILD_DIR:-build}
./tests/build.sh
bench="$build/tests/bench/cudaipc-bench"
if [ ! -x "$bench" ]; then
  echo "run-bench: $bench was not built; the tests are off (is gstreamer-check-1.0 installed?)" >&2
  exit 1
fi

# what ran, for the results file (a later --label wins)
if rev=$(git -C "$root" describe --always --dirty 2>/dev/null); then
  label="git $rev"
else
  label="no git revision"
fi
echo "run-bench: $bench run --output $out --label \"$label\" $*"
exec timeout --kill-after=30 "${BENCH_TIMEOUT:-3600}" "$bench" run --output "$out" \
  --label "$label" "$@"
