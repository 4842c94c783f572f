#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# elements suite: `meson install` follows GStreamer's plugin projects. The
# build is installed into a staging folder (DESTDIR); the plugin must land
# in <prefix>/<libdir>/gstreamer-1.0, and gst-inspect-1.0 must find both
# element names there; beside it only libcudaipc-1.0 (library, header,
# pkg-config file) and the Python package, all under the prefix.
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
for f in "$dir/libcudaipc-1.0.so.0.1.0" "$prefix/include/cudaipc-1.0/cudaipc.h" \
    "$dir/pkgconfig/cudaipc-1.0.pc"; do
  [ -f "$stage$f" ] || { echo "FAIL: no $f"; exit 1; }
done
# everything under the prefix, and nothing but these
outside=$(cd "$stage" && find . -type f | sed 's|^\.||' | grep -v "^$prefix/" || true)
[ -z "$outside" ] || { echo "FAIL: installed outside $prefix: $outside"; exit 1; }
others=$(cd "$stage" && find . -type f | sed 's|^\.||' |
  grep -Ev '/gstreamer-1.0/libgstcudaipc.so$|/libcudaipc-1.0.so.0.1.0$|/cudaipc-1.0/cudaipc.h$|/pkgconfig/cudaipc-1.0.pc$|/cudaipc/[_a-z]+\.py$' || true)
[ -z "$others" ] || { echo "FAIL: unexpected files installed: $others"; exit 1; }

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
# the Python package: _config.py beside it with the project's version
pkg=$(cd "$stage" && find . -path '*/cudaipc/__init__.py' | sed 's|^\.||')
if [ -n "$pkg" ] && command -v python3 >/dev/null; then
  want_version=$(meson introspect --projectinfo "$build" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
  got=$(PYTHONPATH="$stage$(dirname "$(dirname "$pkg")")" \
    CUDAIPC_LIBRARY="$stage$dir/libcudaipc-1.0.so.0.1.0" "${preload[@]}" \
    python3 -c 'import cudaipc; print(cudaipc.__version__)') ||
    { echo "FAIL: the installed package does not import"; exit 1; }
  [ "$got" = "$want_version" ] ||
    { echo "FAIL: installed cudaipc.__version__ is $got, not $want_version"; exit 1; }
  echo "ok: cudaipc $got in $(dirname "$pkg")"
fi
echo "ok: $want"
