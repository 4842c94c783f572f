#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every check that needs a GPU, in one run, for a machine with an NVIDIA
# GPU: builds in $BUILD_DIR (default build-gpu), then
#   1. the gpu suite (meson test --suite gpu),
#   2. the benchmark: this plugin and cudadownload ! shmsink, 1080p and 4K,
#      1 and 4 consumers, flat out; and again paced (--rate 1000),
#   3. the soak test on the cuda backend with $SOAK_FRAMES frames (default
#      1000000): fds, host memory and the device's free memory must end
#      where they started.
# Each step has its own time limit and the run goes on after a failure.
# Logs and results files go to DIR; the last lines say what passed.
#
#   tests/gpu/full-check.sh DIR
#
# Where GStreamer is not installed and the packed kit is there
# (.gpuhost/env.sh, docs/benchmarks.md, Reproducing), the kit is used.
# Environment: BUILD_DIR, SOAK_FRAMES, CUDAIPC_NO_APT (set to 1 by default
# here: such machines often have no package registry).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: full-check.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-gpu}
export CUDAIPC_NO_APT=${CUDAIPC_NO_APT:-1}
soak_frames=${SOAK_FRAMES:-1000000}

if ! pkg-config --exists gstreamer-1.0 2>/dev/null && [ -f "$root/.gpuhost/env.sh" ]; then
  echo "full-check: using the packed GStreamer kit (.gpuhost/env.sh)"
  # shellcheck disable=SC1091
  . "$root/.gpuhost/env.sh"
fi
cd "$root"

summary=()
step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name"
  local t0=$SECONDS rc=0
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1 || rc=$?
  tail -n 30 "$out/$name.log"
  summary+=("$name: exit $rc, $((SECONDS - t0)) s")
}

nvidia-smi -L >"$out/gpu.txt" 2>&1 || true
step build 600 ./tests/build.sh
if ! "$BUILD_DIR/tests/ipc-node" probe >"$out/probe.txt" 2>&1; then
  echo "full-check: no usable GPU here ($(tail -n 1 "$out/probe.txt")); nothing else to run"
  exit 77
fi
step gpu-suite 900 meson test -C "$BUILD_DIR" --suite gpu --print-errorlogs \
  --num-processes 1
cp "$BUILD_DIR/meson-logs/testlog.txt" "$out/gpu-suite-testlog.txt" 2>/dev/null || true
step bench 900 tests/bench/run-bench.sh "$out/bench.json" --frames 3000 \
  --timeout 60 --transports cudaipc,shm
step bench-paced 600 tests/bench/run-bench.sh "$out/bench-paced.json" \
  --frames 3000 --timeout 60 --transports cudaipc,shm --rate 1000
step soak 1800 env FRAMES="$soak_frames" tests/soak/soak.sh \
  "$BUILD_DIR/tests/ipc-node" cuda

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
