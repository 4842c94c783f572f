#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite, GStreamer >= 1.24: this plugin's elements and nvcodec's own
# cudaipcsink/cudaipcsrc side by side in one pipeline on each end. The
# producer tees CUDA frames from cudaupload into cuipcsink and into
# nvcodec's cudaipcsink; one consumer pipeline holds cuipcsrc and
# nvcodec's cudaipcsrc. Our frames must all arrive with the checksums of
# the same frames made in one process; nvcodec's branch must deliver its
# frames too (it keeps only the latest frame, so it is paced). Exits 77
# (skip) without a GPU or without nvcodec's cudaipc elements.
set -euo pipefail

node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
for e in cudaupload cudadownload checksumsink; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: no $e"; exit 77; }
done
# nvcodec's has "address"; ours "socket-path". The whole description
# first: grep -q would stop reading early, and under pipefail the writer's
# SIGPIPE would read as "not found".
desc=$(gst-inspect-1.0 cudaipcsink 2>&1 || true)
if ! grep -q "address" <<<"$desc"; then
  echo "SKIP: no nvcodec cudaipcsink here (GStreamer < 1.24); cudaipcsink is: $(grep -E '^ +(Filename|Version) ' <<<"$desc" | tr -s ' ' | paste -sd ';' -)"
  exit 77
fi

dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
# shellcheck source=checksums.sh
. "$(dirname "$0")/checksums.sh"
caps='video/x-raw,format=NV12,width=640,height=360,framerate=30/1'
frames=90

timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=$frames ! $caps ! \
  checksumsink >"$dir/ref"

# nvcodec's elements first in each description: creating ours loads our
# plugin, which leaves the shared names to nvcodec (docs/elements.md)
timeout 60 gst-launch-1.0 -q \
  cudaipcsrc address="$dir/nv.ipc" num-buffers=30 ! fakesink sync=false \
  cuipcsrc socket-path="$dir/ours.sock" connect-timeout=20000 max-held=0 ! \
  cudadownload ! video/x-raw,format=NV12 ! checksumsink >"$dir/got" \
  2>"$dir/consumer.err" &
consumer=$!
sleep 1
timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=$frames is-live=true ! \
  $caps ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! tee name=t \
  t. ! queue ! cudaipcsink address="$dir/nv.ipc" \
  t. ! queue ! cuipcsink socket-path="$dir/ours.sock" backend=cuda \
  wait-for-connection=true on-full=wait full-timeout=0 \
  >"$dir/producer.log" 2>&1 || { echo "the producer failed:"; cat "$dir/producer.log"; exit 1; }
status=0
wait $consumer || { echo "the consumer failed:"; cat "$dir/consumer.err"; status=1; }

n_ref=$(sums "$dir/ref" | wc -l)
n=$(sums "$dir/got" | wc -l)
if diff <(sums "$dir/ref") <(sums "$dir/got") >/dev/null; then
  echo "cuipcsrc beside nvcodec's cudaipcsrc: all $n of $n_ref checksums equal"
else
  echo "cuipcsrc beside nvcodec's cudaipcsrc: $n frames, checksums differ from the reference"
  diff <(sums "$dir/ref") <(sums "$dir/got") | head -5
  status=1
fi
exit $status
