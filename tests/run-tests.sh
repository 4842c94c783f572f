#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The test command. Installs what the build and tests need (Debian/Ubuntu,
# apt-get, when run as root), then builds and runs every meson test suite
# but soak (libs, elements, api, fuzz replays, gpu; gpu skips without a
# CUDA driver) twice:
#   1. against the system's GStreamer, in ./build;
#   2. against the GStreamer 1.26 kit (gst126.tar.xz, see
#      ../shared/gpu-host/README.md), in ./build-126, where nvcodec has
#      elements of our shared names. The kit is unpacked once into
#      ./.gst126.
# It ends with one line, "N passed, N failed[, N skipped]", counted from
# both runs' meson test logs. Where no kit is found, the 1.26 run counts
# as one skipped test and says why.
#
# Extra arguments go to both `meson test` runs (e.g. --suite libs).
# Environment: BUILD_DIR (default build), BUILD_DIR_126 (default
# build-126), CUDAIPC_GST126_KIT (the kit's tarball or unpacked folder;
# default: ../shared/gpu-host/gst126.tar.xz, then shared/gpu-host/, then
# an unpacked ./.gst126), CUDAIPC_GST126=0 to run against the system's
# GStreamer only, CUDAIPC_NO_APT=1 to skip apt-get.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-build}
build126=${BUILD_DIR_126:-build-126}

# The soak suite is long: it runs only when asked for (--suite soak).
if [ $# = 0 ]; then
  set -- --no-suite soak
fi

# Prints the folder of an unpacked 1.26 kit (unpacking it first), or
# nothing with the reason on stderr.
find_kit() {
  local kit=${CUDAIPC_GST126_KIT:-} c
  if [ -z "$kit" ]; then
    for c in "$root/../shared/gpu-host/gst126.tar.xz" \
        "$root/shared/gpu-host/gst126.tar.xz" "$root/.gst126"; do
      if [ -e "$c" ]; then kit=$c; break; fi
    done
  fi
  if [ -z "$kit" ]; then
    echo "no GStreamer 1.26 kit (gst126.tar.xz) in ../shared/gpu-host or shared/gpu-host, and none unpacked in .gst126" >&2
    return 0
  fi
  if [ -d "$kit" ]; then
    [ -f "$kit/env.sh" ] && { (cd "$kit" && pwd); return 0; }
    echo "$kit has no env.sh" >&2
    return 0
  fi
  if [ ! -f "$root/.gst126/env.sh" ] || [ "$kit" -nt "$root/.gst126/env.sh" ]; then
    rm -rf "$root/.gst126" "$root/.gst126.tmp"
    mkdir -p "$root/.gst126.tmp"
    tar -xJf "$kit" -C "$root/.gst126.tmp"
    mv "$root/.gst126.tmp/gst126" "$root/.gst126"
    rmdir "$root/.gst126.tmp"
    touch "$root/.gst126/env.sh"
  fi
  echo "$root/.gst126"
}

rc=0
logs=()

echo "== GStreamer $(pkg-config --modversion gstreamer-1.0 2>/dev/null || echo '(system)'): $build"
BUILD_DIR=$build ./tests/build.sh
set +e
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
r=$?
set -e
[ "$r" = 0 ] || rc=$r
logs+=("$build/meson-logs/testlog.json")

kit_skip=""
if [ "${CUDAIPC_GST126:-1}" != 0 ]; then
  kit=$(find_kit 2>"$build/kit-reason.txt")
  if [ -n "$kit" ]; then
    echo "== GStreamer 1.26 kit ($kit): $build126"
    set +e
    (
      # shellcheck disable=SC1091
      . "$kit/env.sh"
      set -e
      BUILD_DIR=$build126 CUDAIPC_NO_APT=1 ./tests/build.sh
      meson test -C "$build126" --print-errorlogs --num-processes 2 "$@"
    )
    r=$?
    set -e
    [ "$r" = 0 ] || rc=$r
    if [ -f "$build126/meson-logs/testlog.json" ]; then
      logs+=("$build126/meson-logs/testlog.json")
    else
      echo "the 1.26 build failed before any test ran"
      rc=1
      kit_skip="failed"
    fi
  else
    kit_skip="$(cat "$build/kit-reason.txt")"
    echo "GStreamer 1.26 run skipped: $kit_skip"
  fi
fi

python3 - "$kit_skip" "${logs[@]}" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
extra = sys.argv[1]
for path in sys.argv[2:]:
    run = {"passed": 0, "failed": 0, "skipped": 0}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                run["passed"] += 1
            elif result == "SKIP":
                run["skipped"] += 1
            else:
                run["failed"] += 1
    print("%s: %d passed, %d failed, %d skipped" % (path.split("/")[0],
          run["passed"], run["failed"], run["skipped"]))
    for k in counts:
        counts[k] += run[k]
if extra == "failed":
    counts["failed"] += 1
elif extra:
    counts["skipped"] += 1
line = "%d passed, %d failed" % (counts["passed"], counts["failed"])
if counts["skipped"]:
    line += ", %d skipped" % counts["skipped"]
print(line)
PY
exit $rc
