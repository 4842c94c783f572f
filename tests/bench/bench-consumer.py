#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""cudaipc-bench's consumer role in Python, for the rows of (a) run with
--python-consumer: the cudaipc package reads the frames of a cuipcsink,
and each frame becomes an array (torch.from_dlpack of the plane's
capsule, plane.to_dlpack(), on the cuda backend,
numpy.asarray on the host backend) before it is released. It speaks the
orchestrator's protocol as bench-consumer.c does: "ready", the commands
"pushed N" on stdin, one "result ..." line, the latency samples (int64
ns) in --samples; the figures are taken the same way (the latency from
the frame's PTS, which the producer stamped on CLOCK_MONOTONIC, to its
arrival here; CPU from getrusage). With $CUDAIPC_BENCH_STAGES set to a
folder, it also writes there, as stages-PID.txt, where each measured
frame's time went (next_frame, the array, the close, the loop between)
and how often the process slept, its user and system CPU and its page
faults a frame; and, as a control, how long a fixed loop of plain Python
takes every 256 frames, and the CPUs the process ran on.
"""
import argparse
import array
import math
import os
import resource
import select
import sys
import time

import cudaipc


# $CUDAIPC_BENCH_STAGES: the reference loop's length, and how often it runs
REFERENCE_ITERATIONS = 1000
REFERENCE_EVERY = 256


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def cpu_ns():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def percentile(sorted_samples, q):
    n = len(sorted_samples)
    if n == 0:
        return -1
    rank = max(1, min(n, math.ceil(q * n)))
    return sorted_samples[rank - 1]


def reference_loop():
    """A fixed loop of plain Python, no library call: ns an iteration.
    Its time says how fast the core the consumer runs on is running this
    process, whatever the frames do."""
    t0 = time.perf_counter_ns()
    x = 0
    for i in range(REFERENCE_ITERATIONS):
        x += i
    return (time.perf_counter_ns() - t0) / REFERENCE_ITERATIONS


def current_cpu():
    """The CPU this process last ran on (/proc/self/stat, field 39)."""
    try:
        with open("/proc/self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return -1


def stage_report(path, stages, ru0, ru1, measured, refs, cpus):
    """$CUDAIPC_BENCH_STAGES: where a measured frame's time went, and how
    often the process slept (voluntary context switches), its user and
    system CPU and its page faults a frame; and, as a control, the
    reference loop's time and the CPUs it ran on."""
    names = ("next_frame", "array", "close", "between")
    lines = []
    for name, values in zip(names, stages):
        values = sorted(values)
        lines.append("%s p50 %.2f p90 %.2f us" % (
            name, percentile(values, 0.5) / 1e3,
            percentile(values, 0.9) / 1e3))
    waits = sorted(stages[0])
    slept = sum(1 for v in waits if v > 5000)
    lines.append("next_frame over 5 us: %.3f of frames" %
                 (slept / max(1, len(waits))))
    lines.append("voluntary / involuntary switches a frame: %.3f / %.3f" % (
        (ru1.ru_nvcsw - ru0.ru_nvcsw) / max(1, measured),
        (ru1.ru_nivcsw - ru0.ru_nivcsw) / max(1, measured)))
    lines.append("user / system CPU us a frame: %.2f / %.2f" % (
        (ru1.ru_utime - ru0.ru_utime) * 1e6 / max(1, measured),
        (ru1.ru_stime - ru0.ru_stime) * 1e6 / max(1, measured)))
    lines.append("minor / major page faults a frame: %.3f / %.3f" % (
        (ru1.ru_minflt - ru0.ru_minflt) / max(1, measured),
        (ru1.ru_majflt - ru0.ru_majflt) / max(1, measured)))
    refs = sorted(refs)
    lines.append("reference loop p50 %.1f p90 %.1f ns an iteration "
                 "(%d samples)" % (percentile(refs, 0.5),
                                   percentile(refs, 0.9), len(refs)))
    lines.append("CPUs it ran on: %s" % " ".join(
        str(c) for c in sorted(set(cpus))))
    with open(os.path.join(path, "stages-%d.txt" % os.getpid()), "w") as f:
        f.write("\n".join(lines) + "\n")


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role")
    ap.add_argument("--socket", required=True)
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--idle-timeout", type=int, default=5)
    ap.add_argument("--grace-ms", type=int, default=1000)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--samples")
    ap.add_argument("--consumer-device", type=int, default=0)
    ap.add_argument("--announce", default="socket")
    ap.add_argument("--spin-us", type=int, default=0)
    args, _ = ap.parse_known_args()

    make_array = None
    array_kind = "numpy"
    samples = []
    received = measured = bad = repeats = 0
    first_stamp = last_arrival = last_seen = cpu0 = cpu1 = 0
    last_index = -1
    done = False
    producer_done = False
    pushed = -1
    done_at = 0
    ended = "timeout"
    ok = True
    pending = b""
    stdin_open = True
    polls = 0
    deadline = now_ns() + args.timeout * 10 ** 9
    stages_dir = os.environ.get("CUDAIPC_BENCH_STAGES")
    stages = ([], [], [], [])
    refs = []
    cpus = []
    ru0 = ru1 = None
    t_closed = 0

    # the array libraries loaded (and torch's CUDA set up) before the
    # first frame: a frame held through an import of seconds would read
    # to the producer as a consumer that stopped releasing
    try:
        import torch
        torch.zeros(1, device="cuda:%d" % args.consumer_device)
    except Exception:
        pass
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass

    cams = cudaipc.Consumer(args.socket, name="bench-consumer-%d" %
                            args.index, device_id=args.consumer_device,
                            connect_timeout=args.timeout, reconnect=False,
                            max_held=2, keep_all=True,
                            announce=args.announce, spin_us=args.spin_us)
    say("ready")
    while True:
        if stages_dir:
            t_next = now_ns()
        try:
            frame = cams.next_frame(timeout=0.05)
        except cudaipc.FrameTimeout:
            frame = None
        except cudaipc.EndOfStream:
            ended = "eos"
            break
        except cudaipc.Error as e:
            sys.stderr.write("consumer %d: %s\n" % (args.index, e))
            ended = "error"
            ok = False
            break
        if frame is not None:
            t = now_ns()
            if make_array is None:
                if frame.backend == "cuda":
                    import torch

                    # the capsule, without the stream exchange of
                    # torch.from_dlpack(plane) (docs/api.md, Python)
                    def make_array(plane):
                        return torch.from_dlpack(plane.to_dlpack())
                    array_kind = "torch"
                else:
                    import numpy
                    make_array = numpy.asarray
            with frame:
                arr = make_array(frame.planes[0])
                if stages_dir:
                    t_array = now_ns()
                stamp, index, last = frame.pts, frame.offset, frame.marker
                del arr
            if stages_dir:
                t_closed_before, t_closed = t_closed, now_ns()
                if measured > 0:
                    stages[0].append(t - t_next)
                    stages[1].append(t_array - t)
                    stages[2].append(t_closed - t_array)
                    stages[3].append(t_next - t_closed_before)
                    if measured % REFERENCE_EVERY == 0:
                        # t_closed is taken again after it: it lands in
                        # no stage (about 0.1 us a frame of CPU, spread)
                        refs.append(reference_loop())
                        cpus.append(current_cpu())
                        t_closed = now_ns()
            if last_index >= 0 and index <= last_index:
                repeats += 1
                received += 1
                last_seen = t
                continue
            received += 1
            last_seen = t
            last_index = index
            if index >= args.warmup and not done:
                if measured == 0:
                    first_stamp = stamp if stamp is not None else t
                    cpu0 = cpu_ns()
                    ru0 = resource.getrusage(resource.RUSAGE_SELF)
                measured += 1
                last_arrival = t
                if stamp is not None and stamp <= t:
                    samples.append(t - stamp)
                else:
                    bad += 1
            if not done and (last or index + 1 >= args.warmup + args.frames):
                done = True
                cpu1 = cpu_ns()
                ru1 = resource.getrusage(resource.RUSAGE_SELF)
                ended = "last"
                break
        # "pushed N": the producer has finished; looked for while frames
        # stream only every 64th, as the C consumer's main loop would
        # between frames (a select() each frame costs a Python consumer
        # more than the frame itself)
        polls += 1
        if stdin_open and not producer_done and (frame is None or
                                                 polls % 64 == 0):
            r, _, _ = select.select([sys.stdin.buffer], [], [], 0)
            if r:
                chunk = os.read(sys.stdin.fileno(), 256)
                if not chunk:
                    stdin_open = False
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.startswith(b"pushed "):
                        pushed = int(line[7:])
                        producer_done = True
                        done_at = now_ns()
        t = now_ns()
        if producer_done and t - max(last_seen, done_at) > \
                args.grace_ms * 10 ** 6:
            ended = "drained" if received else "none"
            break
        if received and t - last_seen > args.idle_timeout * 10 ** 9:
            ended = "idle"
            break
        if t > deadline:
            break
    if not done:
        cpu1 = cpu_ns()
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cams.close()
    if stages_dir and ru0 is not None:
        stage_report(stages_dir, stages, ru0, ru1, measured, refs, cpus)

    samples.sort()
    if args.samples:
        with open(args.samples, "wb") as f:
            array.array("q", samples).tofile(f)
    say("result received=%d measured=%d samples=%d bad_stamps=%d repeats=%d "
        "first_stamp=%d last_arrival=%d cpu_ns=%d cpu_total_ns=%d "
        "last_index=%d p50_ns=%d p99_ns=%d pushed=%d ended=%s ids=carried "
        "memory=%s driver_calls=0 src_type=cudaipc-python" % (
            received, measured, len(samples), bad, repeats, first_stamp,
            last_arrival, cpu1 - cpu0 if measured else 0, cpu_ns(),
            last_index, percentile(samples, 0.50), percentile(samples, 0.99),
            pushed, ended, "python-" + array_kind))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
