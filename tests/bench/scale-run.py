#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The scale run: many camera streams on one box, as an analytics box runs
them (docs/benchmarks.md, Many streams).

For each stream count N: ceil(N / K) producer processes of K streams each
(scale-node producer: appsrc ! cuipcsink, on-full=wait, 1080p30 NV12) and C
analytics processes that each read all N streams (scale-node consumer: N
cuipcsrc in one pipeline, so one CUDA context a process), for --seconds.
Reported per count: frames delivered over frames pushed, latency p99 per
stream (the worst and the median of the streams), total CPU in cores and
per stream, file descriptors and resident memory per process, GPU memory
per process and per stream (nvidia-smi, where there is one). With
--find-limit the counts go on (doubling) past the list until a p99 is over
one frame time or a frame is lost; the largest count that held is the box's
limit. Writes the results file (--output, JSON) and a PNG of p99 and CPU
against the stream count (--plot), made from the results.

    tests/bench/scale-run.py --streams 8,16,32 --seconds 60 \\
        --output scale.json --plot scale.png
    tests/bench/scale-run.py --replot scale.json --plot scale.png
"""
import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_plot  # noqa: E402


def parse_result(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


class Proc:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
        self.ready = threading.Event()
        self.result = None
        self.err = []
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._errs, daemon=True).start()

    def _out(self):
        for line in self.p.stdout:
            if line.startswith("ready"):
                self.ready.set()
            elif line.startswith("result "):
                self.result = parse_result(line)
        self.ready.set()

    def _errs(self):
        for line in self.p.stderr:
            if len(self.err) < 20:
                self.err.append(line.rstrip())


def gpu_memory():
    """MiB of GPU memory per pid, from nvidia-smi; {} without one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {}
    try:
        out = subprocess.run([smi, "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    mem = {}
    for line in out.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit():
            try:
                mem[int(parts[0])] = float(parts[1])
            except ValueError:
                pass
    return mem


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


def finish_early(row):
    """A count that could not start: no figures (run_count()'s finally
    kills its processes)."""
    row.update({"delivered": None, "p50_median_us": None,
                "p99_median_us": None, "p99_worst_us": None,
                "cpu_cores": None, "cpu_us_per_frame_per_stream": None,
                "producer_fds": [], "consumer_fds": [],
                "gpu_mib_total": None})
    return row


def run_count(args, n, env):
    d = tempfile.mkdtemp(prefix="cudaipc-scale-")
    k = args.per_producer
    common = ["--dir", d, "--seconds", str(args.seconds), "--fps",
              str(args.fps)]
    prods, cons = [], []
    row = {"streams": n, "producers": math.ceil(n / k),
           "consumers": args.consumers, "ok": False, "reasons": []}
    try:
        for i in range(0, n, k):
            prods.append(Proc([args.node, "producer", "--first", str(i),
                               "--streams", str(min(k, n - i)),
                               "--clients", str(args.consumers),
                               "--backend", args.backend,
                               "--source", args.source,
                               "--width", str(args.width),
                               "--height", str(args.height)] + common, env))
        # one deadline for them all: waiting for each in turn would add
        # up where many are slow to start (their CUDA contexts made at
        # once, GPU memory short)
        ready_by = time.time() + args.ready_timeout
        for p in prods:
            p.ready.wait(max(0, ready_by - time.time()))
        late = [p for p in prods if p.p.poll() is None and
                not p.ready.is_set()]
        if late:
            used = gpu_memory()
            row["reasons"].append(
                "%d of %d producers not ready after %d s%s: %s" % (
                    len(late), len(prods), args.ready_timeout,
                    " (GPU memory of the processes: %.0f MiB)" %
                    sum(used.values()) if used else "",
                    " | ".join(late[0].err[-3:]) or "nothing said"))
            return finish_early(row)
        for _ in range(args.consumers):
            cons.append(Proc([args.node, "consumer", "--streams", str(n),
                              "--max-held", str(args.reader_max_held)] +
                             common, env))
        # GPU memory once everything runs
        time.sleep(min(10, args.seconds / 2) + 3)
        mem = gpu_memory()
        deadline = time.time() + args.seconds + 180
        for p in prods + cons:
            try:
                p.p.wait(max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.p.kill()
                p.p.wait()
                row["reasons"].append("pid %d timed out" % p.p.pid)
        time.sleep(0.2)
    finally:
        for p in prods + cons:
            if p.p.poll() is None:
                p.p.kill()
        shutil.rmtree(d, ignore_errors=True)

    for p in prods + cons:
        if p.p.returncode != 0 or p.result is None:
            row["reasons"].append("pid %d exited with %s: %s" % (
                p.p.pid, p.p.returncode, " | ".join(p.err[-3:])))
    pr = [p.result for p in prods if p.result]
    cr = [p.result for p in cons if p.result]
    pushed_per_stream = {}
    for i, r in zip(range(0, n, k), pr):
        s = int(r["streams"])
        for j in range(s):
            pushed_per_stream[i + j] = int(r["pushed"]) // s
    expected = sum(pushed_per_stream.values()) * len(cr)
    received = sum(int(r.get("received_%d" % s, 0)) for r in cr
                   for s in range(n))
    missing = sum(int(r.get("missing_%d" % s, 0)) for r in cr
                  for s in range(n))
    reader_dropped = sum(int(r.get("dropped_%d" % s, 0)) for r in cr
                         for s in range(n))
    disorder = sum(int(r.get("disorder_%d" % s, 0)) for r in cr
                   for s in range(n))
    p99s = [float(r["p99_%d_us" % s]) for r in cr for s in range(n)
            if float(r.get("p99_%d_us" % s, -1)) >= 0]
    p50s = [float(r["p50_%d_us" % s]) for r in cr for s in range(n)
            if float(r.get("p50_%d_us" % s, -1)) >= 0]
    wall = max([int(r["wall_ns"]) for r in pr + cr] or [1])
    cpu = sum(int(r["cpu_ns"]) for r in pr + cr)
    row.update({
        "frames_pushed": sum(pushed_per_stream.values()),
        "frames_expected": expected, "frames_received": received,
        "frames_missing": missing,
        "frames_dropped_by_sinks": sum(int(r["dropped"]) for r in pr),
        "frames_dropped_by_readers": reader_dropped,
        "frames_out_of_order": disorder,
        "delivered": received / expected if expected else None,
        "p99_worst_us": max(p99s) if p99s else None,
        "p99_median_us": median(p99s),
        "p50_median_us": median(p50s),
        "cpu_cores": cpu / wall if wall else None,
        "cpu_us_per_frame_per_stream": (cpu / 1e3 /
                                        max(1, sum(pushed_per_stream.values()
                                                   ))),
        "producer_cpu_cores": [int(r["cpu_ns"]) / wall for r in pr],
        "consumer_cpu_cores": [int(r["cpu_ns"]) / wall for r in cr],
        "producer_fds": [int(r["fds"]) for r in pr],
        "consumer_fds": [int(r["fds"]) for r in cr],
        "producer_rss_mib": [int(r["rss_kib"]) / 1024 for r in pr],
        "consumer_rss_mib": [int(r["rss_kib"]) / 1024 for r in cr],
        "producer_gpu_mib": [mem.get(p.p.pid) for p in prods],
        "consumer_gpu_mib": [mem.get(p.p.pid) for p in cons],
    })
    gpu = [v for v in row["producer_gpu_mib"] + row["consumer_gpu_mib"]
           if v is not None]
    row["gpu_mib_total"] = sum(gpu) if gpu else None
    row["gpu_mib_per_stream"] = sum(gpu) / n if gpu else None
    frame_us = 1e6 / args.fps if args.latency_limit_ms is None else \
        args.latency_limit_ms * 1e3
    if row["delivered"] != 1.0:
        row["reasons"].append("delivered %s of the frames (%d dropped by "
                              "the sinks, %d by the readers' sources)" % (
                                  "%.4f" % row["delivered"]
                                  if row["delivered"] is not None
                                  else "none",
                                  row["frames_dropped_by_sinks"],
                                  reader_dropped))
    if disorder:
        row["reasons"].append("%d frames out of order" % disorder)
    if (frame_us > 0 and row["p99_worst_us"] is not None and
            row["p99_worst_us"] > frame_us):
        row["reasons"].append("a stream's p99 was %.0f us, over the limit "
                              "(%.0f us)" % (row["p99_worst_us"], frame_us))
    row["ok"] = not row["reasons"]
    return row


def say_row(r):
    def f(v, fmt):
        return fmt % v if v is not None else "n/a"
    print("| %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["streams"], r["producers"], r["consumers"],
        f(r["delivered"], "%.4f"), f(r["p50_median_us"], "%.0f"),
        f(r["p99_median_us"], "%.0f"), f(r["p99_worst_us"], "%.0f"),
        f(r["cpu_cores"], "%.2f"), f(r["cpu_us_per_frame_per_stream"],
                                     "%.0f"),
        "%d/%d" % (max(r["producer_fds"] or [0]),
                   max(r["consumer_fds"] or [0])),
        f(r["gpu_mib_total"], "%.0f"),
        "ok" if r["ok"] else "; ".join(r["reasons"])), flush=True)


def make_plot(results, path):
    rows = [r for r in results["rows"]]
    xs = [r["streams"] for r in rows]
    frame_ms = 1e3 / results["fps"]
    scale_plot.plot(path, "CUDAIPC: %s%s, %dX%d AT %d FPS, %d READERS" % (
        results["backend"].upper(),
        " FROM DEVICE" if results.get("source") == "device" else "",
        results["width"], results["height"],
        results["fps"], results["consumers"]), xs, [
        ("WORST P99 MS (DASHED: ONE FRAME)",
         [r["p99_worst_us"] / 1e3 if r["p99_worst_us"] is not None else None
          for r in rows], frame_ms),
        ("CPU CORES, ALL PROCESSES", [r["cpu_cores"] for r in rows], None)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", default="4,8,16,32")
    ap.add_argument("--per-producer", type=int, default=4,
                    help="streams a producer process serves (4)")
    ap.add_argument("--consumers", type=int, default=3,
                    help="analytics processes, each reading every stream")
    ap.add_argument("--reader-max-held", type=int, default=0,
                    help="the readers' cuipcsrc max-held (0: every frame, "
                    "a slow reader holds its producer back, as on-full="
                    "wait means; -1: the ring less one, frames beyond dropped "
                    "and counted)")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1080)
    ap.add_argument("--backend", default="auto",
                    help="cuda, host, or auto (cuda where nvidia-smi runs)")
    ap.add_argument("--source", default="host", choices=["host", "device"],
                    help="where the producers' frames are: host (system "
                    "memory, as a camera's: the sink uploads each) or device "
                    "(CUDA memory, as a GPU decoder's: copied on the GPU)")
    ap.add_argument("--latency-limit-ms", type=float, default=None,
                    help="the p99 a count must stay under (default one "
                    "frame time; 0: not checked)")
    ap.add_argument("--ready-timeout", type=int, default=90,
                    help="seconds every producer of a count has to start "
                    "(90); a count where one has not is reported and ends")
    ap.add_argument("--find-limit", action="store_true")
    ap.add_argument("--max-streams", type=int, default=256)
    ap.add_argument("--node", default=None)
    ap.add_argument("--plugin-path", default=None)
    ap.add_argument("--output", default="scale-results.json")
    ap.add_argument("--plot", default=None)
    ap.add_argument("--replot", default=None,
                    help="only make --plot from this results file")
    args = ap.parse_args()

    if args.replot:
        with open(args.replot) as f:
            make_plot(json.load(f), args.plot or "scale.png")
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    build = os.environ.get("BUILD_DIR", os.path.join(root, "build"))
    args.node = args.node or os.path.join(build, "tests", "bench",
                                          "scale-node")
    env = dict(os.environ)
    env["GST_PLUGIN_PATH_1_0"] = args.plugin_path or os.path.join(build,
                                                                  "plugin")
    if args.backend == "auto":
        args.backend = "cuda" if gpu_memory() != {} or (
            shutil.which("nvidia-smi") and
            subprocess.run(["nvidia-smi", "-L"], capture_output=True)
            .returncode == 0) else "host"
    counts = [int(x) for x in args.streams.split(",")]
    results = {"backend": args.backend, "source": args.source,
               "fps": args.fps, "width": args.width,
               "reader_max_held": args.reader_max_held,
               "height": args.height, "seconds": args.seconds,
               "per_producer": args.per_producer,
               "consumers": args.consumers, "host": platform.node(),
               "cpu_count": os.cpu_count(),
               "date": time.strftime("%Y-%m-%d"), "rows": []}
    print("| streams | producers | readers | delivered | p50 us (median) "
          "| p99 us (median) | p99 us (worst) | CPU cores | CPU us a frame "
          "| fds (producer/reader) | GPU MiB | |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | --- |", flush=True)
    i = 0
    while i < len(counts):
        row = run_count(args, counts[i], env)
        results["rows"].append(row)
        say_row(row)
        with open(args.output, "w") as f:
            json.dump(results, f, indent=1)
        if (args.find_limit and i == len(counts) - 1 and row["ok"] and
                counts[i] * 2 <= args.max_streams):
            counts.append(counts[i] * 2)
        i += 1
    held = [r["streams"] for r in results["rows"] if r["ok"]]
    results["largest_count_held"] = max(held) if held else None
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1)
    print("largest count with every frame delivered and every p99 under "
          "one frame time: %s" % results["largest_count_held"])
    if args.plot:
        make_plot(results, args.plot)
        print("plot:", args.plot)
    return 0 if results["rows"] and all(r["ok"] for r in results["rows"]
                                        if r["streams"] in
                                        [int(x) for x in
                                         args.streams.split(",")]) else 3


if __name__ == "__main__":
    sys.exit(main())
