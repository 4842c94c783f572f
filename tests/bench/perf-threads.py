#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where a thread's CPU goes, by shared object, from perf (docs/benchmarks.md,
Where the time goes).

Reads listings of `perf report --stdio --tid TID --percentage relative
--sort dso,sym` (one file a thread) and prints, for each, its sample count,
the share of each shared object (the kernel, libcuda, GStreamer's
libraries, this project's plugin, libc, ...) and its heaviest symbols, as
Markdown.

  perf record -F 4999 -o run.data -- cudaipc-bench run ...
  perf report -i run.data --stdio --sort pid,comm          # the threads
  perf report -i run.data --stdio --tid TID --percentage relative \\
      --sort dso,sym --percent-limit 0.05 > TID.txt
  perf-threads.py [--top N] TID.txt...
"""
import argparse
import collections
import re
import sys

LINE = re.compile(r"\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)")


def summarise(path, top):
    shares = collections.Counter()
    symbols = []
    samples = "?"
    with open(path) as f:
        for line in f:
            m = re.match(r"# Samples: (\S+)", line)
            if m:
                samples = m.group(1)
            m = LINE.match(line)
            if m:
                share = float(m.group(1))
                dso = m.group(2).split(".so")[0]
                shares[dso] += share
                symbols.append((share, dso, m.group(4).strip()))
    listed = sum(shares.values())
    heavy = "; ".join("%s %.1f" % (s if not s.startswith("0x") else d, p)
                      for p, d, s in symbols[:top])
    dsos = ", ".join("%s %.1f" % kv for kv in shares.most_common(8))
    return "| %s | %s | %.0f | %s | %s |" % (path, samples, listed, dsos,
                                             heavy)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    print("| thread | samples | % listed | % by shared object | heaviest "
          "symbols, % |")
    print("| --- | ---: | ---: | --- | --- |")
    for path in args.files:
        print(summarise(path, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
