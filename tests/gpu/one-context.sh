#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: one CUDA context a process. nvcodec's elements make a CUDA
# context of their own as they go to READY unless a neighbour, the bin or
# the application gives them one; cuipcsink and cuipcsrc answer their
# context query with one over the device's primary context, the context
# our slots are imported in. So nvh264dec or cudaupload into cuipcsink,
# and cuipcsrc into cudadownload, make no CUDA context at all, and every
# frame still arrives intact. The same pipelines with fakesink in our
# place must make one (else the log line looked for is not there and the
# check would prove nothing). Exits 77 (skip) without a GPU, nvh264dec,
# cudaupload or cudadownload.
set -euo pipefail

clip=$1
node=$CUDAIPC_IPC_NODE
"$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
for e in nvh264dec cudaupload cudadownload; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: no $e"; exit 77; }
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=checksums.sh
. "$(dirname "$0")/checksums.sh"
export GST_DEBUG="cudacontext:6,cudaipcgstcuda:4"
made='Created CUDA context'
shared="primary context, shared with the pipeline"
# the log lines of @2 in log @1
count() { grep -c "$2" "$1" || true; }

# nvcodec makes (and destroys) a context of each GPU as its plugin loads,
# to probe it: that many are made before any element asks
GST_DEBUG_FILE="$dir/probe" timeout 60 gst-inspect-1.0 nvh264dec >/dev/null
probe=$(count "$dir/probe" "$made")
echo "loading nvcodec makes $probe CUDA context(s)"
# the controls: nvcodec's elements alone make one more
GST_DEBUG_FILE="$dir/control-dec" timeout 60 gst-launch-1.0 -q filesrc \
  location="$clip" ! h264parse ! nvh264dec ! fakesink
GST_DEBUG_FILE="$dir/control-up" timeout 60 gst-launch-1.0 -q videotestsrc \
  num-buffers=10 ! cudaupload ! cudadownload ! fakesink
for c in control-dec control-up; do
  n=$(count "$dir/$c" "$made")
  echo "$c: $((n - probe)) CUDA context(s) made by the pipeline"
  if [ "$n" -le "$probe" ]; then
    echo "$c: no \"$made\" logged: this check cannot see a context made"
    exit 1
  fi
done

timeout 60 gst-launch-1.0 -q filesrc location="$clip" ! h264parse ! nvh264dec ! \
  cudadownload ! video/x-raw,format=NV12 ! checksumsink >"$dir/ref"

status=0
# a queue between, as users write it: context queries pass through it
for up in "filesrc location=$clip ! h264parse ! nvh264dec ! queue" \
    "videotestsrc num-buffers=30 ! video/x-raw,format=NV12 ! cudaupload"; do
  name=${up%% *}
  sock="$dir/$name.sock"
  GST_DEBUG_FILE="$dir/$name-consumer.log" timeout 60 gst-launch-1.0 \
    cuipcsrc socket-path="$sock" ! queue ! cudadownload ! \
    video/x-raw,format=NV12 ! checksumsink >"$dir/$name" 2>&1 &
  consumer=$!
  # shellcheck disable=SC2086
  if ! GST_DEBUG_FILE="$dir/$name-producer.log" timeout 60 gst-launch-1.0 \
      -q $up ! cuipcsink socket-path="$sock" backend=cuda \
      wait-for-connection=true sync=false >"$dir/$name-producer" 2>&1; then
    echo "$name: the producer failed:"; tail -n 10 "$dir/$name-producer"
    status=1
  fi
  wait $consumer || { echo "$name: the consumer failed:"; said "$dir/$name"; status=1; }
  for role in producer consumer; do
    n=$(( $(count "$dir/$name-$role.log" "$made") - probe ))
    s=$(count "$dir/$name-$role.log" "$shared")
    echo "$name, $role: $n CUDA context(s) made by the pipeline, $s shared" \
      "over the primary"
    if [ "$n" -ne 0 ] || [ "$s" -eq 0 ]; then
      grep -h "$made\|$shared" "$dir/$name-$role.log" | head -n 5
      status=1
    fi
  done
  n=$(sums "$dir/$name" | wc -l)
  if [ "$name" = filesrc ]; then
    if ! diff <(sums "$dir/ref") <(sums "$dir/$name") >/dev/null; then
      echo "$name: checksums differ from nvh264dec's own"; status=1
    else
      echo "$name: all $n frames equal nvh264dec's own"
    fi
  elif [ "$n" -ne 30 ]; then
    echo "$name: $n frames of 30 arrived"; status=1
  else
    echo "$name: 30 of 30 frames arrived"
  fi
done
exit $status
