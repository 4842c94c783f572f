#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where a Python consumer's time goes, stage by stage (docs/benchmarks.md,
Python consumers).

Starts a producer that is always ahead of the consumer (gst-launch-1.0:
videotestsrc, on the cuda backend through cudaupload, into cuipcsink with
on-full=wait, no clock), reads its frames with the cudaipc package as the
benchmark's Python consumer does, and times each stage of every frame
with time.perf_counter_ns:

  next_frame   cudaipc_consumer_next() and the Frame made of it (the frame
               is already there: no wait, the producer is ahead)
  planes       frame.planes[0]
  array        torch.from_dlpack(plane.to_dlpack()) (cuda backend; with
               --array protocol, torch.from_dlpack(plane), which asks
               torch for its current stream first) or numpy.asarray
               (host)
  close        the end of the frame's with block
  release      the array let go, which releases the frame (the DLPack
               deleter or the last reference, then cudaipc_frame_release)

With --split, each frame also gets a capsule made (plane.__dlpack__(),
this package's part of torch.from_dlpack) and dropped unused: the
"capsule" stage, timed apart (and in the CPU figure). The frames' size
matters to no stage (a frame is a pointer); it is small by default so
that the producer, which draws each frame on the CPU, stays ahead.

and prints the mean and median of each in microseconds, their sum, and
the process's CPU time per frame. Needs GST_PLUGIN_PATH (the plugin) and
CUDAIPC_LIBRARY or an installed libcudaipc, as the tests do.

  python-stages.py [--backend cuda|host] [--frames N] [--width W]
                   [--height H] [--split] [--array capsule|protocol]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import cudaipc

STAGES = ("next_frame", "planes", "capsule", "array", "close", "release")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=360)
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--array", choices=("capsule", "protocol"),
                    default="capsule")
    args = ap.parse_args()

    if args.backend == "cuda":
        import torch
        torch.zeros(1, device="cuda")
        if args.array == "protocol":
            make_array = torch.from_dlpack
        else:
            def make_array(plane):
                return torch.from_dlpack(plane.to_dlpack())
        upload = "cudaupload ! "
    else:
        import numpy
        make_array = numpy.asarray
        upload = ""
    folder = tempfile.mkdtemp(prefix="cudaipc-stages-")
    sock = os.path.join(folder, "s.sock")
    total = args.frames + args.warmup
    caps = "video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1" % (
        args.width, args.height)
    cmd = ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=%d" % total,
           "pattern=black", "!", caps, "!"] + upload.split() + [
        "cuipcsink", "sync=false", "socket-path=" + sock,
        "backend=" + args.backend, "on-full=wait", "full-timeout=0",
        "consumer-timeout=0", "wait-for-connection=true"]
    producer = subprocess.Popen(cmd)
    times = {k: [] for k in STAGES}
    pc = time.perf_counter_ns
    n = measured0 = cpu0 = 0
    try:
        with cudaipc.Consumer(sock, connect_timeout=30, reconnect=False,
                              max_held=2, keep_all=True) as cams:
            while True:
                a = pc()
                try:
                    frame = cams.next_frame(timeout=10)
                except cudaipc.EndOfStream:
                    break
                b = pc()
                plane = frame.planes[0]
                c = pc()
                if args.split:
                    plane.__dlpack__()
                c2 = pc()
                with frame:
                    arr = make_array(plane)
                    d = pc()
                e = pc()
                del plane, frame
                del arr
                f = pc()
                n += 1
                if n == args.warmup:
                    cpu0 = time.process_time_ns()
                    measured0 = n
                if n > args.warmup:
                    for k, v in zip(STAGES, (b - a, c - b, c2 - c, d - c2,
                                             e - d, f - e)):
                        times[k].append(v)
        cpu = time.process_time_ns() - cpu0
    finally:
        producer.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    measured = n - measured0
    if measured <= 0:
        print("python-stages: no frames measured", file=sys.stderr)
        return 1
    print("python-stages: %d frames of %dx%d NV12, %s backend, %s" % (
        measured, args.width, args.height, args.backend,
        "numpy.asarray" if args.backend == "host" else
        "torch.from_dlpack(plane)" if args.array == "protocol" else
        "torch.from_dlpack(plane.to_dlpack())"))
    print("| stage | mean us | median us |")
    print("| --- | ---: | ---: |")
    total_mean = 0.0
    for k in STAGES:
        if k == "capsule" and not args.split:
            continue
        mean = sum(times[k]) / measured / 1e3
        total_mean += mean
        print("| %s | %.2f | %.2f |" % (
            k, mean, statistics.median(times[k]) / 1e3 if times[k] else 0))
    print("| sum | %.2f | |" % total_mean)
    print("CPU per frame: %.2f us" % (cpu / measured / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
