#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What serving a producer's frames to other hosts costs (docs/recipes.md,
# The cost): the CPU time of the serving process, from /proc/PID/stat
# (utime + stime) over a run after a warm-up, in percent of one core, at
# 30 fps, host backend, x264enc tune=zerolatency speed-preset=ultrafast:
#   - RTP over UDP, one stream, 640x360 and 1280x720, for moving colour
#     bars (easy content) and for noise (the worst case);
#   - RTSP (docs/examples/python/rtsp-serve.py) at 640x360, bars, with 1
#     and 3 clients on one shared encoder, and 3 clients with one encoder
#     each (--per-client).
# The producer (videotestsrc ! cuipcsink) and the clients run beside it
# and are not counted. Needs x264 (gstreamer1.0-plugins-ugly) and, for
# the RTSP rows, gir1.2-gst-rtsp-server-1.0; exits 77 without x264.
#
#   recipes-cost.sh [BUILD_DIR]      environment: RUN_S (default 20)
set -euo pipefail

cd "$(dirname "$0")/../.."
build=$(cd "${1:-${BUILD_DIR:-build}}" && pwd)
run_s=${RUN_S:-20}
export GST_PLUGIN_PATH_1_0="$build/plugin${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
for e in cuipcsrc x264enc rtph264pay udpsink; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 ||
    { echo "SKIP: no $e in this GStreamer"; exit 77; }
done
hz=$(getconf CLK_TCK)
# Debian's interpreter, where PyGObject is
py=/usr/bin/python3
[ -x "$py" ] || py=python3
enc="videoconvert ! video/x-raw,format=NV12 ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 bitrate=2000"
pids=()
stop() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop EXIT

# ticks PID: its user + system clock ticks so far
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure PID WHAT: prints the CPU of PID over run_s seconds after 3 s
measure() {
  local pid=$1 t0 t1
  sleep 3
  t0=$(ticks "$pid")
  sleep "$run_s"
  t1=$(ticks "$pid")
  awk -v t="$((t1 - t0))" -v hz="$hz" -v s="$run_s" -v what="$2" \
    'BEGIN { printf "%-52s %5.1f %% of a core\n", what, 100 * t / hz / s }'
}

# producer SOCKET WIDTH HEIGHT PATTERN
producer() {
  local pattern=$4
  case $pattern in
    bars) pattern="smpte horizontal-speed=4" ;;
  esac
  # shellcheck disable=SC2086
  gst-launch-1.0 -q videotestsrc is-live=true pattern=$pattern ! \
    "video/x-raw,format=NV12,width=$2,height=$3,framerate=30/1" ! \
    cuipcsink socket-path="$1" backend=host >/dev/null 2>&1 &
  pids+=($!)
}

echo "serving process CPU, 30 fps, $(nproc) cores, GStreamer $(gst-launch-1.0 --version | sed -n 's/.*version //p' | head -1), ${run_s} s runs"
for size in 640x360 1280x720; do
  for pattern in bars snow; do
    sock="@cudaipc-cost-$$-$size-$pattern"
    producer "$sock" "${size%x*}" "${size#*x}" "$pattern"
    # shellcheck disable=SC2086
    gst-launch-1.0 -q cuipcsrc socket-path="$sock" ! $enc ! \
      h264parse config-interval=-1 ! rtph264pay pt=96 ! \
      udpsink host=127.0.0.1 port=9 >/dev/null 2>&1 &
    server=$!
    pids+=("$server")
    measure "$server" "RTP, $size, $pattern"
    stop
  done
done

if "$py" -c "import gi; gi.require_version('GstRtspServer', '1.0')" 2>/dev/null; then
  for mode in "1 shared" "3 shared" "3 per-client"; do
    n=${mode% *}
    sock="@cudaipc-cost-$$-rtsp-${mode// /-}"
    producer "$sock" 640 360 bars
    out=$(mktemp)
    extra=()
    [ "${mode#* }" = per-client ] && extra=(--per-client)
    "$py" docs/examples/python/rtsp-serve.py "$sock" --port 0 \
      --address 127.0.0.1 --encoder x264 "${extra[@]}" >"$out" 2>/dev/null &
    server=$!
    pids+=("$server")
    for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
    url=$(head -1 "$out")
    rm -f "$out"
    for _ in $(seq "$n"); do
      gst-launch-1.0 -q rtspsrc location="$url" protocols=tcp ! fakesink \
        >/dev/null 2>&1 &
      pids+=($!)
    done
    measure "$server" "RTSP, 640x360, bars, $n client(s), ${mode#* }"
    stop
  done
else
  echo "RTSP rows skipped: no GstRtspServer for Python (gir1.2-gst-rtsp-server-1.0)"
fi
