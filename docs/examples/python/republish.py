#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads NV12 frames from one producer, draws a box into a copy of each
(where its regions of interest are, else in the middle) and publishes the
copies on a socket of its own, with the boxes as regions of interest, for a
cuipcsrc pipeline:

    python3 republish.py /tmp/cam0.sock /tmp/annotated.sock &
    gst-launch-1.0 cuipcsrc socket-path=/tmp/annotated.sock ! ...

The copy is on the GPU with PyTorch (cuda backend), with NumPy otherwise;
widths that are a multiple of 4 (the republished frames are laid out as
GStreamer lays out NV12: a stride of the width).
"""
import argparse

import cudaipc


def box(y, x0, y0, w, h, value=235):
    """Draws a rectangle's outline into the luma plane @y (an array)."""
    x1, y1 = min(x0 + w, y.shape[1]) - 1, min(y0 + h, y.shape[0]) - 1
    y[y0, x0:x1 + 1] = value
    y[y1, x0:x1 + 1] = value
    y[y0:y1 + 1, x0] = value
    y[y0:y1 + 1, x1] = value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--frames", type=int, default=0)
    args = ap.parse_args()

    out = None
    n = 0
    with cudaipc.Consumer(args.input, timeout=10) as cams:
        for frame in cams:
            with frame:
                if frame.format != "NV12":
                    raise SystemExit("NV12 frames only, not " + frame.format)
                if out is None:
                    out = cudaipc.Producer(args.output, "NV12", frame.width,
                                           frame.height,
                                           backend=frame.backend)
                h, w = frame.height, frame.width
                # a copy in the caps' own layout (NV12, stride = width),
                # whatever the strides of the frame
                if frame.backend == "cuda":
                    import torch
                    planes = [torch.from_dlpack(p) for p in frame.planes]
                    copy = torch.cat([planes[0],
                                      planes[1].reshape(h // 2, w)])
                else:
                    import numpy
                    planes = [numpy.asarray(p) for p in frame.planes]
                    copy = numpy.concatenate([planes[0],
                                              planes[1].reshape(h // 2, w)])
                del planes
                y = copy[:h]
                regions = frame.regions or [
                    cudaipc.Region("box", w // 4, h // 4, w // 2, h // 2)]
                for r in regions:
                    box(y, min(r.x, w - 2), min(r.y, h - 2), max(r.w, 2),
                        max(r.h, 2))
                out.publish(copy, pts=frame.pts, regions=regions)
                n += 1
            if args.frames and n >= args.frames:
                break
    if out is not None:
        out.end()
        print("republished %d frames, %d dropped" % (out.counts[0],
                                                    out.counts[1]))
        out.close()


if __name__ == "__main__":
    main()
