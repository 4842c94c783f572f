#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: cuipcsrc into nvcodec's CUDA elements. An H.264 clip decoded
# by nvh264dec into cuipcsink; in another process cuipcsrc ! cudaconvert
# (to I420) ! cudascale (to half size) ! cudadownload, checksummed frame by
# frame, with output-memory auto and gst-cuda; every run must give the
# checksums of the same chain run on the decoder's output in one process.
# nvcodec's filters take GstCudaMemory only ("Input buffer is not CUDA"
# on every version), so output-memory=imported goes into cudadownload,
# which reads other memory through a plain map, and is compared with the
# decoder's NV12 frames. Exits 77 (skip) without a GPU, nvh264dec,
# cudaconvert or cudascale (the filters need NVRTC at run time).
set -euo pipefail

clip=$1
node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
for e in nvh264dec cudaconvert cudascale cudadownload; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: no $e"; exit 77; }
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=checksums.sh
. "$(dirname "$0")/checksums.sh"
filters='cudaconvert ! video/x-raw(memory:CUDAMemory),format=I420 !
  cudascale ! video/x-raw(memory:CUDAMemory),width=320,height=180 !
  cudadownload ! video/x-raw,format=I420 ! checksumsink'
plain='cudadownload ! video/x-raw,format=NV12 ! checksumsink'

# shellcheck disable=SC2086
timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  $filters >"$dir/ref"
# shellcheck disable=SC2086
timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  $plain >"$dir/ref-plain"
n_ref=$(sums "$dir/ref" | wc -l)
[ "$n_ref" -gt 0 ] || { echo "no reference frames"; exit 1; }

status=0
for mode in auto gst-cuda imported; do
  sock="$dir/$mode.sock"
  chain=$filters ref="$dir/ref"
  if [ "$mode" = imported ]; then chain=$plain ref="$dir/ref-plain"; fi
  # shellcheck disable=SC2086
  # every frame: max-held=0 here, and a producer that waits for it
  timeout 60 gst-launch-1.0 cuipcsrc socket-path="$sock" output-memory=$mode \
    max-held=0 ! $chain >"$dir/$mode" 2>&1 &
  consumer=$!
  if ! timeout 30 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! \
      nvh264dec ! cuipcsink socket-path="$sock" backend=cuda \
      wait-for-connection=true sync=false on-full=wait full-timeout=0 \
      consumer-timeout=0 >"$dir/$mode-producer" 2>&1; then
    echo "output-memory=$mode: the producer failed or waited 30 s:"
    tail -n 10 "$dir/$mode-producer"
    kill $consumer 2>/dev/null || true
  fi
  if ! wait $consumer; then
    echo "output-memory=$mode: the consumer failed:"
    said "$dir/$mode"
    status=1
    continue
  fi
  n=$(sums "$dir/$mode" | wc -l)
  n_ref=$(sums "$ref" | wc -l)
  if diff <(sums "$ref") <(sums "$dir/$mode") >/dev/null; then
    echo "output-memory=$mode: all $n of $n_ref checksums equal"
  else
    echo "output-memory=$mode: $n frames, checksums differ from the reference"
    echo "frames that differ (from 0): $(paste -d ' ' <(sums "$ref") <(sums "$dir/$mode") |
      awk '$1 != $2 { print NR - 1 }' | head -n 10 | paste -sd ',' -)"
    said "$dir/$mode"
    status=1
  fi
done
exit $status
