#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The sanitizer pass: builds everything with clang under AddressSanitizer
# and UndefinedBehaviorSanitizer in build-asan, runs the libs, elements, api
# and fuzz (corpus replay) suites there with leak checking on, then runs each
# libFuzzer target for FUZZ_SECONDS (default 30) from the seed corpus.
# Needs clang and its runtime (Debian: clang libclang-rt-dev).
#
# GStreamer's own headers read unaligned words on purpose (gstutils.h,
# GST_HAVE_UNALIGNED_ACCESS), so UBSan's alignment check is off; every other
# UBSan check halts the test.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${ASAN_BUILD_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-30}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Db_sanitize=address,undefined \
    -Db_lundef=false -Dfuzzing=true -Dgpu-tests=disabled \
    -Dc_args=-fno-sanitize=alignment -Dc_link_args=-fno-sanitize=alignment \
    >/dev/null
fi
ninja -C "$build" >/dev/null

# Plugins are scanned in-process: the sanitized plugin cannot be loaded by
# the system's unsanitized plugin scanner. Tests that run GStreamer's own
# tools (gst-inspect-1.0, gst-launch-1.0) preload the sanitizer's runtime
# into them, so that they can load the sanitized plugin.
export GST_REGISTRY_FORK=no
CUDAIPC_TOOL_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
export CUDAIPC_TOOL_PRELOAD
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0
# GLib's quark table growth, left allocated by GLib on purpose
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
meson test -C "$build" --suite libs --suite elements --suite api --suite fuzz \
  --print-errorlogs --num-processes 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for target in protocol descriptor metas text channel; do
  mkdir -p "$work/$target"
  cp tests/fuzz/corpus/$target/* "$work/$target/"
  echo "fuzzing $target for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz-$target" -max_total_time="$seconds" \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/$target" >"$work/$target.log" 2>&1; then
    tail -40 "$work/$target.log"
    echo "fuzz-$target found a failing input"
    exit 1
  fi
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)" \
    "$work/$target.log" || true
done
echo "sanitizer pass: clean"
