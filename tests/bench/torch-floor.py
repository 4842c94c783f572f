#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What torch itself costs to make a tensor of a frame it is handed, with
no frame and no IPC: the floor under any Python consumer that makes a
torch tensor of every frame (docs/benchmarks.md, Python consumers).

Times, in one process, on one CUDA tensor the size of a 4K NV12 frame's Y
plane, each over --rounds calls (time.perf_counter_ns around the call,
the median and the mean):

  current_stream  torch.cuda.current_stream("cuda:N"), which
                  torch.from_dlpack() asks for first of any object with
                  __dlpack__ on a CUDA device
  to_dlpack       torch.utils.dlpack.to_dlpack(t): a capsule of t
  from_capsule    torch.utils.dlpack.from_dlpack(capsule), the capsules
                  made beforehand: the tensor alone
  from_object     torch.from_dlpack(obj), obj an object whose
                  __dlpack__ hands out a capsule made beforehand, as a
                  frame's plane does: what from_dlpack adds around the
                  tensor
  from_tensor     torch.from_dlpack(t) of a torch tensor: both ends torch's
  loop            an empty Python loop's round, for scale

  torch-floor.py [--rounds N] [--device N]
"""
import argparse
import statistics
import sys
import time


class Handed:
    """Hands out one capsule made beforehand, as a frame's plane would."""

    __slots__ = ("capsule", "device")

    def __init__(self, capsule, device):
        self.capsule = capsule
        self.device = device

    def __dlpack_device__(self):
        return (2, self.device)

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule


def timed(fn, args):
    pc = time.perf_counter_ns
    out = []
    for a in args:
        t0 = pc()
        r = fn(a)
        out.append(pc() - t0)
        del r           # freed outside the time
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    try:
        import torch
        import torch.utils.dlpack as tdl
    except ImportError:
        print("torch-floor: no torch here", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch-floor: torch finds no CUDA device", file=sys.stderr)
        return 77
    dev = "cuda:%d" % args.device
    t = torch.zeros((2160, 3840), dtype=torch.uint8, device=dev)
    torch.cuda.synchronize()
    n = args.rounds
    rows = []

    rows.append(("current_stream", timed(
        lambda _: torch.cuda.current_stream(dev), range(n))))
    rows.append(("to_dlpack", timed(tdl.to_dlpack, [t] * n)))
    caps = [tdl.to_dlpack(t) for _ in range(n)]
    rows.append(("from_capsule", timed(tdl.from_dlpack, caps)))
    del caps
    objs = [Handed(tdl.to_dlpack(t), args.device) for _ in range(n)]
    rows.append(("from_object", timed(torch.from_dlpack, objs)))
    del objs
    rows.append(("from_tensor", timed(torch.from_dlpack, [t] * n)))
    rows.append(("loop", timed(lambda _: None, range(n))))

    print("torch-floor: torch %s, %s, %d rounds each" % (
        torch.__version__, torch.cuda.get_device_name(args.device), n))
    print("| call | median us | mean us |")
    print("| --- | ---: | ---: |")
    for name, ns in rows:
        print("| %s | %.2f | %.2f |" % (name, statistics.median(ns) / 1e3,
                                        sum(ns) / len(ns) / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
