#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A consumer in a container of its own. One producer (1080p NV12, on-full=
# wait, waiting for its two consumers) feeds one consumer in the shared
# namespaces and one in its own PID, IPC and mount namespaces with a fresh
# /dev/shm, what `docker run` gives a container by default: they share
# only the socket's folder (and the GPU). Both must get every frame
# bit-exact on their first connection, each ordered by the fence page, and
# the producer must never synchronise on the host. The contained consumer
# reads the producer's messages through shared memory (announce=
# shared-memory: a memfd and a wake-up socket passed over the socket), the
# other on the socket.
#
# gpu suite: the cuda backend, frames from cudaupload, ordering=auto.
# elements suite (CUDAIPC_TEST_BACKEND=host): the host backend with
# ordering=fence, whose fence page the producer writes on the CPU: the
# same protocol, fds and checks, without a GPU.
# consumer-timeout is 5 s, not 500 ms: this is about namespaces, and under
# the sanitizer on a loaded 2-core machine the contained consumer (which
# checks every 1080p frame) once released nothing for 500 ms and was
# dropped as stuck, then reconnected.
# Exits 77 (skip), saying why, without a GPU (cuda) or where unshare may
# not make those namespaces.
set -euo pipefail

node=$CUDAIPC_IPC_NODE
backend=${CUDAIPC_TEST_BACKEND:-cuda}
if [ "$backend" = cuda ]; then
  "$node" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
  producer_args=(--upload --sink "backend=cuda on-full=wait full-timeout=0 consumer-timeout=5000 wait-for-connection=true")
else
  producer_args=(--sink "backend=host ordering=fence on-full=wait full-timeout=0 consumer-timeout=5000 wait-for-connection=true")
fi
# unshare, sh and mount run with the system's own libraries: a GStreamer
# kit on LD_LIBRARY_PATH may carry an older libmount than the system's
# unshare needs; the consumer gets the kit's path back
libs=${LD_LIBRARY_PATH:-}
if ! why=$(env -u LD_LIBRARY_PATH unshare --pid --ipc --mount --fork --mount-proc \
    sh -c 'mount -t tmpfs none /dev/shm' 2>&1); then
  echo "SKIP: unshare --pid --ipc --mount --fork --mount-proc with a tmpfs" \
    "on /dev/shm is not permitted here: $why"
  exit 77
fi

dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
sock="$dir/producer.sock"
frames=150

field() { grep -Eo "(^| )$2=[^ ]*" "$1" | head -1 | cut -d= -f2; }

"$node" consumer "$sock" >"$dir/shared.out" 2>"$dir/shared.err" &
shared=$!
# its own /dev/shm, /proc and PID 1; the socket's folder is still seen
env -u LD_LIBRARY_PATH unshare --pid --ipc --mount --fork --mount-proc sh -c \
  'mount -t tmpfs none /dev/shm && exec env LD_LIBRARY_PATH="$2" "$0" consumer "$1" --src announce=shared-memory' \
  "$node" "$sock" "$libs" >"$dir/contained.out" 2>"$dir/contained.err" &
contained=$!

status=0
timeout 120 "$node" producer "$sock" --frames $frames --clients 2 \
  --width 1920 --height 1080 "${producer_args[@]}" \
  >"$dir/producer.out" 2>"$dir/producer.err" || {
    echo "the producer failed:"; cat "$dir/producer.out" "$dir/producer.err"
    status=1
  }
wait $shared || status=1
wait $contained || status=1
cat "$dir/producer.out"
for who in shared contained; do
  out="$dir/$who.out"
  echo "$who: $(cat "$out")"
  n=$(field "$out" frames); bad=$(field "$out" bad)
  connects=$(field "$out" connects); fenced=$(field "$out" fenced)
  channel=$(field "$out" channel); want_channel=0
  [ $who = contained ] && want_channel=1
  if [ "$n" != $frames ] || [ "$bad" != 0 ] || [ "$connects" != 1 ] ||
      [ "$fenced" != 1 ] || [ "$channel" != $want_channel ]; then
    echo "FAIL: the $who consumer: frames=$n (of $frames) bad=$bad" \
      "connections=$connects (1 wanted) fenced=$fenced" \
      "channel=$channel ($want_channel wanted)"
    cat "$dir/$who.err"
    status=1
  fi
done
p="$dir/producer.out"
if [ "$(field "$p" published)" != $frames ] ||
    [ "$(field "$p" dropped)" != 0 ] || [ "$(field "$p" host_syncs)" != 0 ]; then
  echo "FAIL: the producer published $(field "$p" published) of $frames," \
    "dropped $(field "$p" dropped), synchronised $(field "$p" host_syncs)" \
    "frames on the host (0 wanted)"
  status=1
fi
[ $status = 0 ] && echo "containers ($backend): both consumers got all $frames frames" \
  "bit-exact on one connection each, ordered by the fence page, the" \
  "contained one through its announce channel; the producer synchronised" \
  "none on the host"
exit $status
