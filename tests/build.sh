#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Installs what the build and tests need (Debian/Ubuntu, apt-get, when run
# as root and something is missing), then configures and builds in
# $BUILD_DIR (default: build). Sourced by run-tests.sh and main-job.sh.
# Set CUDAIPC_NO_APT=1 to skip apt-get.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD_DIR:-build}

packages="meson ninja-build pkg-config gcc python3 libglib2.0-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly python3-numpy python3-gi
  python3-gst-1.0 gir1.2-gst-rtsp-server-1.0"

if [ "${CUDAIPC_NO_APT:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=""
  for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
  fi
fi

if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086
  meson setup "$build" ${MESON_SETUP_ARGS:-} >/dev/null
fi
ninja -C "$build" >/dev/null
