#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: one producer and two consumers, three processes, sharing
# 1080p NV12 frames through cuipcsink/cuipcsrc. On the GPU (cuda
# backend) where a CUDA driver and device are found, else on the host
# backend (it says which). Every frame each consumer receives is compared
# byte for byte with what the producer wrote. Prints frames moved per
# consumer, a checksum of every frame it received next to the producer's
# of every frame it wrote, and the time per frame; that time includes the producer writing
# every byte of each frame and each consumer checking every byte: the
# hand-over alone is measured by tests/bench (docs/benchmarks.md).
#
# Environment: FRAMES (default 600), WIDTH/HEIGHT (1920x1080), BUILD_DIR.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
./tests/build.sh

frames=${FRAMES:-600}
width=${WIDTH:-1920}
height=${HEIGHT:-1080}
node="$build/tests/ipc-node"
plugins=$(cd "$build/plugin" && pwd)
export GST_PLUGIN_PATH_1_0="$plugins${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"

if probe=$("$node" probe 2>&1); then
  backend=cuda
  echo "backend: cuda ($probe)"
else
  backend=host
  echo "backend: host memory (no GPU here: ${probe#no GPU: })"
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sock="$dir/main.sock"

timeout 300 "$node" consumer "$sock" >"$dir/c1" 2>"$dir/c1.err" &
c1=$!
timeout 300 "$node" consumer "$sock" >"$dir/c2" 2>"$dir/c2.err" &
c2=$!
rc=0
timeout 300 "$node" producer "$sock" --frames "$frames" --width "$width" \
  --height "$height" --clients 2 \
  --sink "backend=$backend ring-size=4 on-full=wait" >"$dir/p" 2>"$dir/p.err" || rc=1
wait $c1 || rc=1
wait $c2 || rc=1

field() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1"; }
sum() { sed -n "s/.* checksum=\([0-9a-f]*\).*/\1/p" "$1"; }
per_frame() { awk -v t="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", t / n; else print "n/a" }'; }

echo "frames: ${width}x${height} NV12, $(( width * height * 3 / 2 )) bytes each"
if [ -s "$dir/p" ]; then
  echo "producer: published $(field "$dir/p" published) of $frames, dropped $(field "$dir/p" dropped), $(per_frame "$(field "$dir/p" elapsed_us)" "$frames") us per frame (writing each frame's bytes included), checksum $(sum "$dir/p")"
fi
for c in c1 c2; do
  if [ -s "$dir/$c" ]; then
    n=$(field "$dir/$c" frames)
    bad=$(( $(field "$dir/$c" bad) + $(field "$dir/$c" recheck_bad) ))
    cs=$(sum "$dir/$c")
    if [ -n "$cs" ] && [ "$cs" = "$(sum "$dir/p")" ]; then match="matches the producer's"; else match="DIFFERS from the producer's"; rc=1; fi
    echo "consumer $c: moved $n frames, $(( n - bad )) intact (byte-exact with the producer's), $(per_frame "$(field "$dir/$c" elapsed_us)" "$n") us per frame (checking every byte included), checksum $cs ($match)"
    [ "$bad" = 0 ] && [ "$n" = "$frames" ] || rc=1
  else
    rc=1
  fi
done
if [ $rc != 0 ]; then
  echo "FAILED"; cat "$dir"/*.err >&2
fi
exit $rc
