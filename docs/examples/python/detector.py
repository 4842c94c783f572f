#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A detector stand-in: reads every frame a cuipcsink publishes, computes
its mean luma where the frame is (PyTorch on the GPU for the cuda backend,
NumPy for the host backend), and prints frames/s and the hand-over latency
(from the producer's publishing to the frame in Python).

    python3 detector.py /tmp/cam0.sock [--frames N] [--device D]

It reads any pipeline that ends in cuipcsink socket-path=/tmp/cam0.sock;
a test pattern does for a try, from the top of a built tree (backend=cuda
on a GPU, with PyTorch):

    export GST_PLUGIN_PATH=$PWD/build/plugin PYTHONPATH=$PWD/build/python
    gst-launch-1.0 videotestsrc is-live=true ! \
        video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 ! \
        cuipcsink socket-path=/tmp/cam0.sock backend=host &
    python3 docs/examples/python/detector.py /tmp/cam0.sock --frames 300
"""
import argparse
import time

import cudaipc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("socket")
    ap.add_argument("--frames", type=int, default=0,
                    help="stop after this many (default: at the end)")
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()

    torch = numpy = None
    lat, n, t0, total = [], 0, None, 0.0
    with cudaipc.Consumer(args.socket, device_id=args.device,
                          timeout=10) as cams:
        for frame in cams:
            with frame:
                arrived = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                if frame.backend == "cuda":
                    if torch is None:
                        import torch
                    y = torch.from_dlpack(frame.planes[0])
                    luma = y.float().mean().item()
                else:
                    if numpy is None:
                        import numpy
                    luma = float(numpy.asarray(frame.planes[0]).mean())
                lat.append((arrived - frame.publish_time) / 1000.0)
                total += luma
                if t0 is None:
                    t0 = time.monotonic()
                n += 1
                if n % 100 == 0:
                    print("frame %d: mean luma %.1f" % (frame.number, luma))
            if args.frames and n >= args.frames:
                break
    if n < 2:
        print("%d frames" % n)
        return
    elapsed = time.monotonic() - t0
    lat.sort()
    print("%d frames, %.1f frames/s, hand-over latency p50 %.1f us, p99 "
          "%.1f us, mean luma %.1f" % (n, (n - 1) / elapsed,
                                       lat[len(lat) // 2],
                                       lat[min(len(lat) - 1,
                                               len(lat) * 99 // 100)],
                                       total / n))


if __name__ == "__main__":
    main()
