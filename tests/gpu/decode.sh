#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: an H.264 clip decoded by nvh264dec into cudaipcsink, received
# by cudaipcsrc in another process, downloaded with cudadownload and
# checksummed frame by frame; the checksums must equal those of the same
# clip decoded and downloaded in one process. Exits 77 (skip) without a
# GPU or without nvh264dec.
set -euo pipefail

clip=$1
node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
gst-inspect-1.0 nvh264dec >/dev/null 2>&1 || { echo "SKIP: no nvh264dec"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sock="$dir/dec.sock"
sums() { grep -Eo '[0-9a-f]{40}' "$1" || true; }

timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  cudadownload ! video/x-raw,format=NV12 ! checksumsink >"$dir/ref"

timeout 60 gst-launch-1.0 -q cudaipcsrc socket-path="$sock" ! cudadownload ! \
  video/x-raw,format=NV12 ! checksumsink >"$dir/ipc" &
consumer=$!
timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  cudaipcsink socket-path="$sock" backend=cuda wait-for-connection=true sync=false
wait $consumer

n_ref=$(sums "$dir/ref" | wc -l)
n_ipc=$(sums "$dir/ipc" | wc -l)
echo "reference: $n_ref frames, through cudaipc: $n_ipc frames"
[ "$n_ref" -gt 0 ] || { echo "no reference frames"; exit 1; }
if ! diff <(sums "$dir/ref") <(sums "$dir/ipc") >/dev/null; then
  echo "checksums differ"; diff <(sums "$dir/ref") <(sums "$dir/ipc") | head; exit 1
fi
echo "all $n_ipc checksums equal"
