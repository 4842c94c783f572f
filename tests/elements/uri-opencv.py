# SPDX-License-Identifier: LGPL-2.1-or-later
"""elements suite: OpenCV's cv2.VideoCapture reads a cuipcsink's frames
from a cuipc:// URI. Its GStreamer backend hands a URI to uridecodebin,
which finds cuipcsrc by the scheme. The producer is gst-launch-1.0 with
the sink given as a URI too.

Skips (exit 77) where python3-opencv is not installed (the CI machines do
not install it), where its OpenCV has no GStreamer backend, or where the
GStreamer in use has no uridecodebin (the 1.26 kit has no playback
plugin)."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

SKIP = 77
FRAMES = 10
WIDTH, HEIGHT = 64, 48


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def main():
    # Under the sanitizer pass (tests/sanitize.sh) the plugin is built with
    # AddressSanitizer: this interpreter (where OpenCV loads GStreamer) and
    # gst-launch-1.0 start with its runtime loaded, and check no leaks of
    # their own.
    preload = os.environ.get("CUDAIPC_TOOL_PRELOAD")
    if preload and os.environ.get("LD_PRELOAD") != preload:
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, LD_PRELOAD=preload,
                       ASAN_OPTIONS="detect_leaks=0"))
    try:
        import cv2
    except ImportError:
        skip("no OpenCV for this python3 (Debian: python3-opencv)")
    info = " ".join(cv2.getBuildInformation().split())
    if "GStreamer: YES" not in info:
        skip("this OpenCV has no GStreamer backend")
    inspect = subprocess.run(["gst-inspect-1.0", "uridecodebin"],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, timeout=60)
    if inspect.returncode != 0:
        skip("no uridecodebin here (GStreamer's playback plugin)")

    folder = tempfile.mkdtemp(prefix="cudaipc-uri-opencv-")
    sock = os.path.join(folder, "cam.sock")
    uri = "cuipc://" + urllib.parse.quote(sock)
    producer = subprocess.Popen(
        ["gst-launch-1.0", "-q", "videotestsrc", "is-live=true", "!",
         "video/x-raw,format=NV12,width=%d,height=%d,framerate=100/1"
         % (WIDTH, HEIGHT), "!", uri + "?backend=host"])
    try:
        cap = cv2.VideoCapture(uri + "?max-held=2", cv2.CAP_GSTREAMER)
        assert cap.isOpened(), "VideoCapture(%s) did not open" % uri
        got = 0
        deadline = time.monotonic() + 20
        while got < FRAMES and time.monotonic() < deadline:
            ok, frame = cap.read()
            if ok:
                assert frame.shape == (HEIGHT, WIDTH, 3), frame.shape
                got += 1
        cap.release()
        assert got == FRAMES, "%d of %d frames" % (got, FRAMES)
        assert producer.poll() is None, "the producer ended early"
        print("uri-opencv: %d frames of %dx%d from %s" % (got, WIDTH, HEIGHT,
                                                           uri))
    finally:
        producer.terminate()
        producer.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
