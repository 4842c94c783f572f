#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# elements suite: `meson install` follows GStreamer's plugin projects. The
# build is installed into a staging folder (DESTDIR); the plugin must land
# in <prefix>/<libdir>/gstreamer-1.0 and nowhere else, and gst-inspect-1.0
# must find both element names there.
#
#   install.sh BUILD_ROOT PREFIX LIBDIR
set -euo pipefail

build=$1 prefix=$2 libdir=$3
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --no-rebuild --destdir "$stage" >"$stage.log" 2>&1 ||
  { cat "$stage.log"; rm -f "$stage.log"; exit 1; }
rm -f "$stage.log"
case $libdir in /*) dir=$libdir ;; *) dir=$prefix/$libdir ;; esac
want="$stage$dir/gstreamer-1.0/libgstcudaipc.so"
echo "installed: $(cd "$stage" && find . -type f | sort | tr '\n' ' ')"
[ -f "$want" ] || { echo "FAIL: no $want"; exit 1; }
n=$(find "$stage" -type f | wc -l)
[ "$n" = 1 ] || { echo "FAIL: $n files installed, expected the plugin alone"; exit 1; }

export GST_PLUGIN_PATH_1_0="$stage$dir/gstreamer-1.0"
export GST_REGISTRY_1_0="$stage/registry.bin"
# a sanitized build (tests/sanitize.sh): the tool needs the runtime
preload=()
if [ -n "${CUDAIPC_TOOL_PRELOAD:-}" ]; then
  preload=(env LD_PRELOAD="$CUDAIPC_TOOL_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
fi
for name in cuipcsink cuipcsrc; do
  "${preload[@]}" gst-inspect-1.0 "$name" | grep "Filename *$want" >/dev/null ||
    { echo "FAIL: gst-inspect-1.0 $name does not describe $want"; exit 1; }
done
echo "ok: $want"
