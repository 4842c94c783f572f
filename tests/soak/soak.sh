#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Soak test: one producer publishing FRAMES frames (default 100000) while
# consumers join, leave and are killed at random (one to four at a time).
# Passes when
#  - every consumer that ended normally saw only intact frames (each frame
#    compared byte for byte with what the producer wrote, held frames
#    compared again when released), and no consumer, killed ones included,
#    reported a damaged frame on stderr,
#  - the producer dropped no frame (on-full=wait) and ended cleanly,
#  - the producer's fds and the device's free memory at the end (every
#    consumer gone) equal those after its first frame (no consumer yet), and
#    its resident memory grew by less than RSS_SLACK_KB.
# Not part of the default test run (suite soak): ./tests/run-tests.sh
# --suite soak, or run this script with the ipc-node path.
#
# Usage: soak.sh IPC_NODE [backend]   (backend: cuda or host; default: cuda
# where a GPU is found, else host). Environment: FRAMES, WIDTH, HEIGHT,
# RSS_SLACK_KB (default 8192), SEED.
set -uo pipefail

node=$1
backend=${2:-}
frames=${FRAMES:-100000}
width=${WIDTH:-320}
height=${HEIGHT:-240}
slack=${RSS_SLACK_KB:-8192}
RANDOM=${SEED:-$$}
# run by hand: the plugin is beside the ipc-node of the same build
if [ -z "${GST_PLUGIN_PATH_1_0:-}" ]; then
  GST_PLUGIN_PATH_1_0=$(cd "$(dirname "$node")/../plugin" && pwd)
  export GST_PLUGIN_PATH_1_0
fi
if [ -z "$backend" ]; then
  if "$node" probe >/dev/null 2>&1; then backend=cuda; else backend=host; fi
fi

dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
sock="$dir/soak.sock"
echo "soak: $frames frames ${width}x${height} NV12, backend $backend"

"$node" producer "$sock" --frames "$frames" --width "$width" --height "$height" \
  --resources --quiet-file "$dir/quiet" --sink "backend=$backend ring-size=6 on-full=wait full-timeout=10000" \
  >"$dir/producer" 2>"$dir/producer.err" &
producer=$!

# consumers start once the producer took its first sample
for _ in $(seq 200); do
  grep -q '^steady' "$dir/producer" 2>/dev/null && break
  sleep 0.05
done

declare -A live=()
started=0 killed=0 died=0 left=0
n=0
while kill -0 "$producer" 2>/dev/null && ! grep -q '^eos-reached' "$dir/producer"; do
  # reap consumers that ended
  for pid in "${!live[@]}"; do
    kill -0 "$pid" 2>/dev/null || unset "live[$pid]"
  done
  if [ "${#live[@]}" -lt 4 ]; then
    n=$((n + 1))
    out="$dir/c$n"
    case $((RANDOM % 4)) in
      0) args=(--max-frames $((100 + RANDOM % 3000))); left=$((left + 1)) ;;
      1) args=(--die-after $((10 + RANDOM % 2000))); died=$((died + 1)) ;;
      2) args=(--hold $((RANDOM % 4)) --max-frames $((100 + RANDOM % 5000))); left=$((left + 1)) ;;
      3) args=(); killed=$((killed + 1)) ;;
    esac
    "$node" consumer "$sock" --src "connect-timeout=30000 reconnect=false" \
      "${args[@]}" >"$out" 2>"$out.err" &
    pid=$!
    live[$pid]=1
    started=$((started + 1))
    if [ ${#args[@]} = 0 ]; then
      # killed from outside after a while
      (sleep "0.$((RANDOM % 9 + 1))"; kill -9 "$pid" 2>/dev/null) &
    fi
  fi
  sleep 0.05
done
# the stream is over: let the consumers end, then tell the producer the
# device is quiet (no other process holds GPU memory) for its last sample
for pid in "${!live[@]}"; do
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
done
sleep 2
touch "$dir/quiet"
wait "$producer"
rc=$?
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null

status=0
echo "consumers: $started started ($left left by themselves, $died killed themselves, $killed killed from outside)"
cat "$dir/producer"
if [ $rc != 0 ]; then
  echo "producer failed ($rc)"; cat "$dir/producer.err"; status=1
fi
field() { v=$(sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1" | head -1); echo "${v:-0}"; }
bad=0 complete=0 frames_seen=0
for f in "$dir"/c[0-9]*; do
  case $f in *.err) continue ;; esac
  [ -s "$f" ] || continue
  complete=$((complete + 1))
  frames_seen=$((frames_seen + $(field "$f" frames)))
  b=$(( $(field "$f" bad) + $(field "$f" recheck_bad) ))
  if [ "$b" != 0 ]; then bad=$((bad + b)); echo "damaged frames: $(cat "$f")"; fi
done
echo "consumers that reported: $complete, frames they checked: $frames_seen, damaged: $bad"
[ "$bad" = 0 ] || status=1
# a consumer that was killed reports nothing on stdout, but says on stderr
# where its first damaged frame differed
damaged_killed=$(grep -l "differs at byte" "$dir"/c[0-9]*.err 2>/dev/null | wc -l)
echo "consumers (any) that saw a damaged frame: $damaged_killed"
if [ "$damaged_killed" != 0 ]; then
  grep -h "differs at byte" "$dir"/c[0-9]*.err | head -5; status=1
fi

p="$dir/producer"
if [ "$(field "$p" dropped)" != 0 ] || [ "$(field "$p" published)" != "$frames" ]; then
  echo "producer dropped frames"; status=1
fi
if [ "$(field "$p" fds_start)" != "$(field "$p" fds_end)" ]; then
  echo "producer fds changed"; status=1
fi
if [ "$(field "$p" gpu_free_start)" != "$(field "$p" gpu_free_end)" ]; then
  echo "producer GPU memory changed"; status=1
fi
growth=$(( $(field "$p" rss_end_kb) - $(field "$p" rss_start_kb) ))
echo "producer resident memory growth: ${growth} KiB (limit ${slack})"
[ "$growth" -lt "$slack" ] || status=1
[ $status = 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit $status
