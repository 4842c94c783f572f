#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: an H.264 clip decoded by nvh264dec into cuipcsink, received
# by cuipcsrc in another process, downloaded with cudadownload and
# checksummed frame by frame; the checksums must equal those of the same
# clip decoded and downloaded in one process; and the sink's stats must
# show every decoded frame copied device to device (no CPU round trip).
# Exits 77 (skip) without a GPU or without nvh264dec.
set -euo pipefail

clip=$1
node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
gst-inspect-1.0 nvh264dec >/dev/null 2>&1 || { echo "SKIP: no nvh264dec"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sock="$dir/dec.sock"
# shellcheck source=checksums.sh
. "$(dirname "$0")/checksums.sh"

timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  cudadownload ! video/x-raw,format=NV12 ! checksumsink >"$dir/ref"

# every frame with the defaults: a decoder's stream is not live, so the
# consumer keeps every frame and the producer waits for it (design.md,
# Every frame or the newest)
timeout 60 gst-launch-1.0 cuipcsrc socket-path="$sock" ! cudadownload ! \
  video/x-raw,format=NV12 ! checksumsink >"$dir/ipc" 2>&1 &
consumer=$!
timeout 60 gst-launch-1.0 -m filesrc location="$clip" ! h264parse ! nvh264dec ! \
  cuipcsink socket-path="$sock" backend=cuda wait-for-connection=true sync=false \
  stats-interval=5 >"$dir/producer"
wait $consumer || { echo "the consumer failed:"; said "$dir/ipc"; exit 1; }

# the largest counts any of the sink's periodic stats messages showed
most() { grep -o "$1=(guint64)[0-9]*" "$dir/producer" | grep -o '[0-9]*$' | sort -n | tail -n 1; }
from_gpu=$(most copies-from-gpu)
from_host=$(most copies-from-host)
in_place=$(most frames-in-place)
echo "sink: ${from_gpu:-no} copies from GPU memory, ${from_host:-no} from host memory," \
  "${in_place:-no} frames written in place by the decoder"
if [ $((${from_gpu:-0} + ${in_place:-0})) -eq 0 ] || [ "${from_host:-0}" -ne 0 ]; then
  echo "nvh264dec's frames did not all reach the ring device to device"; exit 1
fi

n_ref=$(sums "$dir/ref" | wc -l)
n_ipc=$(sums "$dir/ipc" | wc -l)
echo "reference: $n_ref frames, through cudaipc: $n_ipc frames"
[ "$n_ref" -gt 0 ] || { echo "no reference frames"; exit 1; }
if ! diff <(sums "$dir/ref") <(sums "$dir/ipc") >/dev/null; then
  echo "checksums differ; the consumer said:"; said "$dir/ipc"
  diff <(sums "$dir/ref") <(sums "$dir/ipc") | head; exit 1
fi
echo "all $n_ipc checksums equal"
