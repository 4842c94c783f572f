#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every check that needs a GPU, in one run, for a machine with an NVIDIA
# GPU, against one GStreamer kit:
#   1. build, in a build folder of the kit's own (build-gpu-122,
#      build-gpu-126, build-gpu-<folder>; BUILD_DIR overrides),
#   2. the gpu suite (meson test --suite gpu),
#   3. the benchmark, one invocation: this plugin, cudadownload ! shmsink
#      and nvcodec's cudaipcsink in ipc-mode legacy and mmap (skipped
#      cleanly on GStreamer 1.22), 1080p and 4K, 1 and 4 consumers, flat
#      out and paced at 1000 frames/s (--rates 0,1000); it prints its row
#      count and an estimate first,
#   4. the GPU ordering rows: 4K, one consumer, ordering=auto (the fence
#      page), events and host, flat out and paced, in one invocation,
#   5. the frame metadata rows: the same 4K row with 0 and 50 regions of
#      interest per frame, flat out and paced,
#   6. the Python consumer rows: (a) at 1080p and 4K, 1 and 4 consumers,
#      flat out and paced, each again with tests/bench/bench-consumer.py
#      (the cudaipc package, torch.from_dlpack per frame) under
#      $CUDAIPC_BENCH_PYTHON, else /opt/torch/.venv/bin/python3,
#   7. the scale run (tests/bench/scale-run.py): $SCALE_STREAMS (default
#      32) streams of 1080p30 from producers of 4 streams each, read by 3
#      analytics processes that each read all of them, for $SCALE_SECONDS
#      (60), then doubling until a p99 is over one frame time or a frame
#      is lost (at most 128 streams); its results file and PNG plot in
#      OUTDIR; SCALE_SECONDS=0 leaves it out,
#   8. the soak test on the cuda backend with $SOAK_FRAMES frames (default
#      200000): fds, host memory and the device's free memory must end
#      where they started.
# Each step has its own time limit (timeout) and the run goes on after a
# failure. Logs and results files go to OUTDIR; the last lines say what
# passed.
#
#   tests/gpu/full-check.sh [--kit 122|126|DIR] OUTDIR
#
#   --kit 122  the packed GStreamer 1.22 kit, .gpuhost/env.sh
#              (docs/benchmarks.md, Reproducing)
#   --kit 126  the GStreamer 1.26 kit unpacked in .gst126 (its env.sh);
#              where that is missing, unpacked there from gst126.tar.xz in
#              ../shared/gpu-host or in .kits/ (a folder git ignores)
#   --kit DIR  any folder with an env.sh
#   no --kit   the system's GStreamer where pkg-config finds one (build
#              folder build-gpu), else the 122 kit
#
# Environment: STEPS (a comma-separated list of the steps to run, e.g.
# gpu-suite,bench; the build always runs; default all: build, gpu-suite,
# bench, bench-ordering, bench-metas, bench-python, scale, soak, so that a
# machine lent in calls of a few minutes each takes them a few at a time),
# BUILD_DIR, SOAK_FRAMES, SCALE_STREAMS, SCALE_SECONDS,
# GPU_SUITE_LIMIT (seconds for the
# whole gpu suite, default 900), GPU_SUITE_ARGS (more meson test options,
# e.g. --timeout-multiplier 0.3 where device time is short), BENCH_FRAMES (default 2000), BENCH_SECONDS
# (2), BENCH_TIMEOUT_ROW (30 s a row), BENCH_ARGS (more cudaipc-bench
# options), CUDAIPC_NO_APT (1 by default here: such machines often have no
# package registry). With the defaults the benchmark's 32 rows took 182 s
# on an H200 with the 1.26 kit (16 rows with 1.22).
#
# Exit status: 0 when every step passed, 1 when one failed, 2 for bad
# arguments or no kit, 77 when there is no usable GPU.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage="usage: full-check.sh [--kit 122|126|DIR] OUTDIR"
kit=""
while [ $# -gt 0 ]; do
  case $1 in
    --kit) kit=${2:?$usage}; shift 2 ;;
    --kit=*) kit=${1#--kit=}; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# = 1 ] || { echo "$usage" >&2; exit 2; }
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
export CUDAIPC_NO_APT=${CUDAIPC_NO_APT:-1}
soak_frames=${SOAK_FRAMES:-200000}

# Unpacks gst126.tar.xz into .gst126 where .gst126 is missing or older
# than the tarball; prints the kit's folder, or nothing.
kit_126() {
  local c
  for c in "$root/../shared/gpu-host/gst126.tar.xz" "$root/.kits/gst126.tar.xz"; do
    [ -f "$c" ] || continue
    if [ ! -f "$root/.gst126/env.sh" ] || [ "$c" -nt "$root/.gst126/env.sh" ]; then
      echo "full-check: unpacking $c into .gst126" >&2
      rm -rf "$root/.gst126" "$root/.gst126.tmp"
      mkdir -p "$root/.gst126.tmp"
      tar -xJf "$c" -C "$root/.gst126.tmp" && mv "$root/.gst126.tmp/gst126" "$root/.gst126" &&
        rmdir "$root/.gst126.tmp" && touch "$root/.gst126/env.sh" || return 0
    fi
    break
  done
  [ -f "$root/.gst126/env.sh" ] && echo "$root/.gst126"
}

if [ -z "$kit" ]; then
  if pkg-config --exists gstreamer-1.0 2>/dev/null; then
    kit=system
  else
    kit=122
  fi
fi
case $kit in
  system) kit_dir=""; name="" ;;
  122) kit_dir="$root/.gpuhost"; name=122 ;;
  126) kit_dir=$(kit_126); name=126 ;;
  *) kit_dir=$(cd "$kit" 2>/dev/null && pwd); name=$(basename "$kit" | tr -c 'A-Za-z0-9._\n-' '_') ;;
esac
if [ "$kit" != system ]; then
  if [ -z "$kit_dir" ] || [ ! -f "$kit_dir/env.sh" ]; then
    echo "full-check: no GStreamer kit for --kit $kit (no env.sh${kit_dir:+ in $kit_dir})" >&2
    exit 2
  fi
  echo "full-check: GStreamer kit $kit_dir"
  # shellcheck disable=SC1091
  . "$kit_dir/env.sh" || exit 2
fi
export BUILD_DIR=${BUILD_DIR:-build-gpu${name:+-$name}}
# the GPU host has meson and ninja in its Python environment only
if ! command -v meson >/dev/null && [ -x /opt/torch/.venv/bin/meson ]; then
  PATH="$PATH:/opt/torch/.venv/bin"
fi
gst=$(pkg-config --modversion gstreamer-1.0 2>/dev/null || echo unknown)
echo "full-check: GStreamer $gst, build folder $BUILD_DIR, results in $out"
cd "$root"

summary=("kit: ${kit_dir:-system} (GStreamer $gst), build folder $BUILD_DIR")
failed=0
# step NAME LIMIT_S DETAIL_CMD COMMAND...: runs COMMAND under timeout with
# its log in OUTDIR/NAME.log; DETAIL_CMD (a shell snippet reading $log)
# adds what the step's own summary says.
step() {
  local name=$1 limit=$2 detail=$3
  shift 3
  # STEPS: only these (build always runs: the others need it)
  if [ -n "${STEPS:-}" ] && [ "$name" != build ] &&
    ! printf ',%s,' "$STEPS" | grep -q ",$name,"; then
    summary+=("$name: not asked for (STEPS=$STEPS)")
    return 0
  fi
  echo "== $name (at most $limit s)"
  local t0=$SECONDS rc=0 log="$out/$name.log" verdict more=""
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 || rc=$?
  tail -n 30 "$log"
  if [ "$rc" = 0 ]; then
    verdict=passed
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    verdict="FAILED (timed out after $limit s)"
    failed=1
  else
    verdict="FAILED (exit $rc)"
    failed=1
  fi
  [ -n "$detail" ] && more=$(log=$log; eval "$detail" 2>/dev/null)
  summary+=("$name: $verdict, $((SECONDS - t0)) s${more:+; $more}")
}

timeout 60 nvidia-smi -L >"$out/gpu.txt" 2>&1 || true
# tests/build.sh keeps ninja quiet: on a failure ninja runs again, for
# its messages in the log
step build 600 "" bash -c './tests/build.sh || { echo "tests/build.sh failed; ninja again:"; ninja -C "$BUILD_DIR"; }'
if ! timeout 60 "$BUILD_DIR/tests/ipc-node" probe >"$out/probe.txt" 2>&1; then
  echo "full-check: no usable GPU here ($(tail -n 1 "$out/probe.txt")); nothing else to run"
  printf '%s\n' "${summary[@]}" "gpu: none usable, the other steps not run" | tee "$out/summary.txt"
  exit 77
fi
# shellcheck disable=SC2086
step gpu-suite "${GPU_SUITE_LIMIT:-900}" "grep -E '^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): ' \"\$log\" | sed -E 's/ +/ /g; s/ \$//' | paste -sd ',' - | sed 's/,/, /g'" \
  meson test -C "$BUILD_DIR" --suite gpu --print-errorlogs --num-processes 1 \
  ${GPU_SUITE_ARGS:-}
cp "$BUILD_DIR/meson-logs/testlog.txt" "$out/gpu-suite-testlog.txt" 2>/dev/null || true
# one invocation, flat out and paced; the whole step is cut at 480 s
# (a SIGTERM: the benchmark still prints its table and writes its file)
# shellcheck disable=SC2086
step bench 480 "grep -E '^cudaipc-bench: rows: ' \"\$log\" | tail -n 1 | sed 's/^cudaipc-bench: //'" \
  env BENCH_TIMEOUT=450 tests/bench/run-bench.sh "$out/bench.json" \
  --frames "${BENCH_FRAMES:-2000}" --seconds "${BENCH_SECONDS:-2}" \
  --timeout "${BENCH_TIMEOUT_ROW:-30}" --rates 0,1000 \
  --transports floor,cudaipc,shm,nvcodec --nvcodec-ipc-modes legacy,mmap \
  ${BENCH_ARGS:-}
# GPU ordering: the 4K one-consumer row with the fence page (auto), the
# legacy events and host synchronisation, flat out and paced, in one run
step bench-ordering 180 "grep -E '^cudaipc-bench: rows: ' \"\$log\" | tail -n 1 | sed 's/^cudaipc-bench: //'" \
  env BENCH_TIMEOUT=170 tests/bench/run-bench.sh "$out/bench-ordering.json" \
  --frames "${BENCH_FRAMES:-2000}" --seconds "${BENCH_SECONDS:-2}" \
  --timeout "${BENCH_TIMEOUT_ROW:-30}" --rates 0,1000 --transports floor,cudaipc \
  --resolutions 4k --consumers 1 --orderings auto,events,host
# frame metadata: the same row with 50 regions of interest per frame and
# without, flat out and paced, in one run
step bench-metas 120 "grep -E '^cudaipc-bench: rows: ' \"\$log\" | tail -n 1 | sed 's/^cudaipc-bench: //'" \
  env BENCH_TIMEOUT=110 tests/bench/run-bench.sh "$out/bench-metas.json" \
  --frames "${BENCH_FRAMES:-2000}" --seconds "${BENCH_SECONDS:-2}" \
  --timeout "${BENCH_TIMEOUT_ROW:-30}" --rates 0,1000 --transports floor,cudaipc \
  --resolutions 4k --consumers 1 --rois 0,50
# Python consumers: each (a) row of one and four consumers at 1080p and
# 4K again with bench-consumer.py (the cudaipc package, torch.from_dlpack
# per frame), flat out and paced, in one run
bench_py=${CUDAIPC_BENCH_PYTHON:-}
[ -n "$bench_py" ] || { [ -x /opt/torch/.venv/bin/python3 ] && bench_py=/opt/torch/.venv/bin/python3; } || bench_py=python3
step bench-python 300 "grep -E '^cudaipc-bench: rows: ' \"\$log\" | tail -n 1 | sed 's/^cudaipc-bench: //'" \
  env BENCH_TIMEOUT=290 CUDAIPC_BENCH_PYTHON="$bench_py" \
  tests/bench/run-bench.sh "$out/bench-python.json" \
  --frames "${BENCH_FRAMES:-2000}" --seconds "${BENCH_SECONDS:-2}" \
  --timeout "${BENCH_TIMEOUT_ROW:-30}" --rates 0,1000 --transports floor,cudaipc \
  --python-consumer
if [ "${SCALE_SECONDS:-60}" != 0 ]; then
  step scale 900 "grep -E '^largest count' \"\$log\" | tail -n 1" \
    env BUILD_DIR="$BUILD_DIR" python3 tests/bench/scale-run.py \
    --streams "${SCALE_STREAMS:-32}" --seconds "${SCALE_SECONDS:-60}" \
    --backend cuda --find-limit --max-streams 128 \
    --output "$out/scale.json" --plot "$out/scale.png"
fi
step soak 1200 "grep -v '^ *$' \"\$log\" | tail -n 1" \
  env FRAMES="$soak_frames" tests/soak/soak.sh "$BUILD_DIR/tests/ipc-node" cuda

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $failed
