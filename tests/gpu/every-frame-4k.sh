#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: every frame by default at 4K (docs/design.md, Every frame or
# the newest). A producer that is not live (videotestsrc num-buffers=N,
# a moving ball) publishes 4K NV12 frames faster than a consumer whose
# videoconvert turns each into I420; every property at its default on both
# sides, except the sockets. The I420 checksums must equal those of the
# same frames converted in one process, frame by frame:
#   1. through cudaupload into the ring, read with cudadownload,
#   2. copied into the ring from system memory, read with a plain map.
# Exits 77 (skip) without a GPU or without cudaupload.
set -euo pipefail

node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
gst-inspect-1.0 cudaupload >/dev/null 2>&1 || { echo "SKIP: no cudaupload"; exit 77; }

n=${CUDAIPC_4K_FRAMES:-90}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
src="videotestsrc num-buffers=$n pattern=ball ! video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1"
to_i420="videoconvert ! video/x-raw,format=I420 ! checksumsink"
# shellcheck source=checksums.sh
. "$(dirname "$0")/checksums.sh"

timeout 120 gst-launch-1.0 -q $src ! $to_i420 >"$dir/ref"
n_ref=$(sums "$dir/ref" | wc -l)
[ "$n_ref" -eq "$n" ] || { echo "the reference has $n_ref frames, not $n"; exit 1; }

run_case() {
  local name=$1 into=$2 out=$3 sock="$dir/$1.sock"
  timeout 120 gst-launch-1.0 cuipcsrc socket-path="$sock" ! $out ! \
    $to_i420 >"$dir/$name.ipc" 2>&1 &
  local consumer=$!
  # a consumer that could not start leaves no one to wait for
  sleep 1
  kill -0 $consumer 2>/dev/null ||
    { echo "$name: the consumer did not start:"; said "$dir/$name.ipc"; exit 1; }
  timeout 120 gst-launch-1.0 -q $src ! $into cuipcsink socket-path="$sock" \
    backend=cuda wait-for-connection=true >"$dir/$name.producer" 2>&1 ||
    { echo "$name: the producer failed:"; tail -n 20 "$dir/$name.producer"; exit 1; }
  wait $consumer || { echo "$name: the consumer failed:"; said "$dir/$name.ipc"; exit 1; }
  local n_ipc
  n_ipc=$(sums "$dir/$name.ipc" | wc -l)
  echo "$name: $n_ipc of $n frames through cudaipc"
  if ! diff <(sums "$dir/ref") <(sums "$dir/$name.ipc") >/dev/null; then
    echo "$name: checksums differ; the consumer said:"; said "$dir/$name.ipc"
    diff <(sums "$dir/ref") <(sums "$dir/$name.ipc") | head; exit 1
  fi
  if grep -q "WARNING" "$dir/$name.ipc"; then
    echo "$name: the consumer warned:"; said "$dir/$name.ipc"; exit 1
  fi
}

run_case cudadownload "cudaupload ! video/x-raw(memory:CUDAMemory) !" \
  "cudadownload ! video/x-raw,format=NV12"
run_case system-memory "" "video/x-raw,format=NV12"
echo "every frame of both cases bit-exact"
