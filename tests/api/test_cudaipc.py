# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python package over libcudaipc, host backend (the api suite).

Frames byte for byte as an ipc-node producer (cuipcsink) sent them; zero
copy (an array's data lies in the producer's slot, mapped in this
process); lifetime (an array outlives its frame's with block, a closed
frame whose arrays are gone holds no slot, a garbage-collected frame goes
back, max_held is enforced); a producer that starts after its consumer;
the errors; a Python producer read by an ipc-node consumer (cuipcsrc). With CUDA present
(CUDAIPC_TEST_GPU=1, the gpu suite) the same on the cuda backend, with
torch.from_dlpack and cupy.from_dlpack.
"""

import ctypes
import gc
import os
import pwd
import random
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

# Under the sanitizer pass the interpreter starts again with the
# sanitizer's runtime loaded; the nodes it starts run with the pass's
# options (NODE_ENV).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from sanitizer_preload import node_env, reexec_preloaded  # noqa: E402

reexec_preloaded()
NODE_ENV = node_env()

import cudaipc  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

NODE = os.environ["CUDAIPC_IPC_NODE"]
GPU = os.environ.get("CUDAIPC_TEST_GPU") == "1"
# the library was built with gstreamer-analytics (GStreamer >= 1.24)
ANALYTICS = os.environ.get("CUDAIPC_TEST_ANALYTICS") == "1"
BACKEND = "cuda" if GPU else "host"
W, H = 64, 48
# a producer that loses no frame to a slow consumer
LOSSLESS = "on-full=wait full-timeout=0 consumer-timeout=0"
SIZE = W * H * 3 // 2
M64 = (1 << 64) - 1


def pattern(key, size=SIZE):
    """test-pattern.h's bytes for (@key, 0)."""
    seed = (0x9E3779B97F4A7C15 * (key + 1)) & M64
    out = bytearray(size)
    i = 0
    while i + 8 <= size:
        struct.pack_into("<Q", out, i, seed ^ ((i * 0xBF58476D1CE4E5B9) & M64))
        i += 8
    while i < size:
        out[i] = (seed >> (i % 8)) & 0xFF
        i += 1
    return bytes(out)


def _user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def in_slot_mapping(addr):
    """Whether @addr lies in a memfd slot mapped in this process."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi and "cudaipc-slot" in line:
                return True
    return False


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cudaipc-py-")
        self.sock = os.path.join(self.dir, "s.sock")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def node(self, *args):
        p = subprocess.Popen([NODE] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=NODE_ENV)
        self.procs.append(p)
        return p

    def producer(self, frames=30, *extra, sink=""):
        return self.node("producer", self.sock, "--frames", str(frames),
                         "--width", str(W), "--height", str(H),
                         "--clients", "1", *extra, "--sink",
                         ("backend=%s " % BACKEND) + sink)

    def finish(self, p, timeout=60):
        out, err = p.communicate(timeout=timeout)
        self.assertEqual(p.returncode, 0, out + err)
        return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


class ConsumerTests(Case):
    def test_frames_as_sent_and_zero_copy(self):
        # every frame, in order, however long this process is descheduled:
        # the consumer keeps all, the producer waits for it as long as it
        # takes and never takes it for stuck
        p = self.producer(30, sink=LOSSLESS)
        n = 0
        with cudaipc.Consumer(self.sock, timeout=20, keep_all=True) as cams:
            for frame in cams:
                with frame:
                    self.assertEqual(frame.backend, BACKEND)
                    self.assertEqual((frame.format, frame.width,
                                      frame.height), ("NV12", W, H))
                    self.assertEqual(frame.offset, n)
                    self.assertEqual(frame.number, n + 1)
                    self.assertIn("NV12", frame.caps)
                    if not GPU:
                        self.assertEqual(frame.tobytes(), pattern(n))
                        self.assertTrue(in_slot_mapping(frame.data_ptr))
                        if numpy is not None:
                            a = numpy.asarray(frame)
                            self.assertEqual(a.ctypes.data, frame.data_ptr)
                            self.assertFalse(a.flags.writeable)
                            y = numpy.asarray(frame.planes[0])
                            uv = numpy.asarray(frame.planes[1])
                            self.assertEqual(y.shape, (H, W))
                            self.assertEqual(uv.shape, (H // 2, W // 2, 2))
                            self.assertEqual(y.ctypes.data, frame.data_ptr)
                            self.assertEqual(bytes(y.tobytes()),
                                             pattern(n)[:W * H])
                n += 1
        self.assertEqual(n, 30)
        self.finish(p)

    def test_announce_through_shared_memory(self):
        # the producer's messages through a page of this consumer's, with
        # a busy read before each wait: every frame, in order, as sent
        p = self.producer(60, sink=LOSSLESS)
        n = 0
        with cudaipc.Consumer(self.sock, timeout=20, keep_all=True,
                              announce="shared-memory", spin_us=20) as cams:
            for frame in cams:
                with frame:
                    self.assertEqual(frame.offset, n)
                    if not GPU:
                        self.assertEqual(frame.tobytes(), pattern(n))
                n += 1
        self.assertEqual(n, 60)
        self.finish(p)
        for bad in ({"announce": "pigeon"}, {"spin_us": 5000},
                    {"spin_us": -1}):
            with self.assertRaises(ValueError):
                cudaipc.Consumer(self.sock, **bad)

    @unittest.skipIf(numpy is None or GPU, "numpy, host backend")
    def test_array_outlives_its_frame(self):
        p = self.producer(5, "--fps", "30")
        cams = cudaipc.Consumer(self.sock, timeout=20, max_held=2)
        with cams.next_frame() as frame:
            n = frame.offset
            a = numpy.asarray(frame.planes[0])
        # the frame is closed, the array still views its slot: held
        self.assertEqual(cams.held, 1)
        self.assertEqual(a.tobytes(), pattern(n)[:W * H])
        with self.assertRaises(ValueError):
            numpy.asarray(frame)
        del frame
        gc.collect()
        self.assertEqual(cams.held, 1)
        del a
        gc.collect()
        self.assertEqual(cams.held, 0)
        cams.close()
        self.finish(p)

    @unittest.skipIf(numpy is None or GPU, "numpy, host backend")
    def test_closed_frame_gives_its_slot_back(self):
        p = self.producer(10, sink=LOSSLESS)
        with cudaipc.Consumer(self.sock, timeout=20, max_held=2,
                              keep_all=True) as cams:
            # closed, its arrays gone: no slot held, though the program
            # keeps the frame
            kept = []
            for i in range(5):
                frame = cams.next_frame()
                source = frame.planes[i // 2 % 2] if i % 2 == 0 else frame
                a = numpy.asarray(source)
                del a, source
                frame.close()
                kept.append(frame)
                self.assertEqual(cams.held, 0)
            # an array alive at close holds the slot until it goes
            frame = cams.next_frame()
            a = numpy.asarray(frame.planes[1])
            b = numpy.asarray(frame)
            frame.close()
            self.assertEqual(cams.held, 1)
            self.assertEqual(b.tobytes(), pattern(frame.offset))
            del b
            self.assertEqual(cams.held, 1)
            del a
            self.assertEqual(cams.held, 0)
            # never closed, arrays gone: the frame's end lets the slot go
            frame = cams.next_frame()
            a = numpy.asarray(frame)
            del a, frame
            self.assertEqual(cams.held, 0)
            # never closed, in a reference cycle: the collector's pass
            frame = cams.next_frame()
            frame.itself = frame
            numpy.asarray(frame.planes[0])
            del frame
            gc.collect()
            self.assertEqual(cams.held, 0)
            for frame in cams:
                frame.close()
        self.finish(p)

    def test_garbage_collected_frame_goes_back(self):
        p = self.producer(5, "--fps", "30")
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            f = cams.next_frame()
            self.assertEqual(cams.held, 1)
            del f
            gc.collect()
            self.assertEqual(cams.held, 0)
        self.finish(p)

    def test_too_many_held(self):
        p = self.producer(6, "--fps", "30", sink="ring-size=4")
        with cudaipc.Consumer(self.sock, timeout=20, max_held=2) as cams:
            a, b = cams.next_frame(), cams.next_frame()
            with self.assertRaises(cudaipc.TooManyFramesHeld) as e:
                cams.next_frame()
            self.assertIn("max_held is 2", str(e.exception))
            a.close()
            c = cams.next_frame()
            b.close()
            c.close()
        self.finish(p)

    def test_keep_all_drops_none(self):
        # a slow consumer with keep_all holds back a producer that waits
        # when its ring is full: every frame arrives, in order
        p = self.producer(40, sink="ring-size=4 " + LOSSLESS)
        got = []
        with cudaipc.Consumer(self.sock, timeout=20, max_held=1,
                              keep_all=True) as cams:
            for frame in cams:
                with frame:
                    got.append(frame.offset)
                    time.sleep(0.005)
        self.assertEqual(got, list(range(40)))
        self.finish(p)

    def test_every_frame_of_a_stream_not_live(self):
        # defaults on both sides: a producer that is not live (appsrc
        # is-live=false) waits for a consumer slower than it, which gets
        # every frame as sent
        p = self.producer(40)
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with cudaipc.Consumer(self.sock, timeout=20) as cams:
                for frame in cams:
                    with frame:
                        if not GPU:
                            self.assertEqual(frame.tobytes(),
                                             pattern(frame.offset))
                        self.assertEqual(frame.dropped_before, 0)
                        got.append(frame.offset)
                    time.sleep(0.03)
                self.assertEqual(cams.dropped, 0)
        self.assertEqual(got, list(range(40)))
        out = self.finish(p)
        self.assertEqual(out["dropped"], "0")

    def test_live_stream_drops_the_oldest_and_says_so(self):
        # a live producer at 200 frames/s and a consumer at about 20: the
        # newest frames win, the drops are counted and warned of once
        p = self.producer(200, "--fps", "200", "--live")
        got, before = [], 0
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            with cudaipc.Consumer(self.sock, timeout=20) as cams:
                for frame in cams:
                    with frame:
                        got.append(frame.offset)
                        before += frame.dropped_before
                    time.sleep(0.05)
                dropped = cams.dropped
        self.finish(p)
        self.assertGreater(dropped, 0)
        self.assertEqual(before, dropped)
        self.assertEqual(len(got) + dropped, 200)
        self.assertEqual(got, sorted(got))
        drops = [w for w in said if "live stream" in str(w.message)]
        self.assertEqual(len(drops), 1, [str(w.message) for w in said])
        self.assertIn("leaky=", str(drops[0].message))

    def test_leaky_none_keeps_a_live_stream_whole(self):
        p = self.producer(60, "--fps", "200", "--live", sink=LOSSLESS)
        got = []
        with cudaipc.Consumer(self.sock, timeout=20, leaky="none") as cams:
            for frame in cams:
                with frame:
                    got.append(frame.offset)
                time.sleep(0.01)
            self.assertEqual(cams.dropped, 0)
        self.assertEqual(got, list(range(60)))
        self.finish(p)
        with self.assertRaises(ValueError):
            cudaipc.Consumer(self.sock, leaky="sometimes")

    def test_no_producer(self):
        with cudaipc.Consumer(self.sock, connect_timeout=0.3) as cams:
            with self.assertRaises(cudaipc.NoProducer) as e:
                cams.next_frame()
        self.assertIn("No producer on " + self.sock, str(e.exception))
        # the element's hint, naming the keywords instead of the properties
        self.assertIn(": start the producer, check socket_path, or raise "
                      "connect_timeout (None waits for as long as it takes)",
                      str(e.exception))
        self.assertNotIn("connect-timeout", str(e.exception))

    def test_connect_timeout_not_cut_by_frame_timeout(self):
        # the first next_frame() waits connect_timeout for a producer,
        # whatever its own time-out
        with cudaipc.Consumer(self.sock, connect_timeout=0.8) as cams:
            start = time.monotonic()
            with self.assertRaises(cudaipc.NoProducer):
                cams.next_frame(timeout=0.1)
            self.assertGreaterEqual(time.monotonic() - start, 0.7)

    def late_producer(self, delay, frames, *extra):
        """A producer that starts @delay seconds from now."""
        p = subprocess.Popen(
            ["sh", "-c", 'sleep %s && exec "$@"' % delay, "sh", NODE,
             "producer", self.sock, "--frames", str(frames), "--width",
             str(W), "--height", str(H), "--clients", "1", *extra,
             "--sink", "backend=%s" % BACKEND],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=NODE_ENV)
        self.procs.append(p)
        return p

    def test_waits_for_a_late_producer(self):
        with cudaipc.Consumer(self.sock, connect_timeout=5,
                              reconnect=False) as cams:
            start = time.monotonic()
            p = self.late_producer(2, 3, "--fps", "30")
            # the frame's time-out counts from the connection
            with cams.next_frame(timeout=1) as frame:
                self.assertEqual(frame.offset, 0)
            self.assertGreaterEqual(time.monotonic() - start, 1.5)
            for frame in cams:
                frame.close()
        self.finish(p)

    def test_reconnects_to_a_late_producer(self):
        # a reconnection waits up to reconnect_timeout (30 s)
        first = self.producer(1000, "--fps", "30", "--die-after", "3")
        with cudaipc.Consumer(self.sock, connect_timeout=5, timeout=20) \
                as cams:
            cams.next_frame().close()
            first.wait(60)
            p = self.late_producer(2, 3, "--fps", "30")
            offsets = []
            while not offsets or offsets[-1] != 0:
                with cams.next_frame(timeout=1) as frame:
                    offsets.append(frame.offset)
            for frame in cams:
                frame.close()
        self.finish(p)

    def test_timeout(self):
        p = self.producer(2, "--fps", "1")
        with cudaipc.Consumer(self.sock) as cams:
            cams.next_frame(timeout=20).close()
            with self.assertRaises(cudaipc.FrameTimeout) as e:
                cams.next_frame(timeout=0.2)
            self.assertIsInstance(e.exception, TimeoutError)
            self.assertIn("No frame from the producer", str(e.exception))
        self.finish(p)

    @unittest.skipUnless(os.getuid() == 0 and _user_exists("nobody"),
                         "needs root, to run a consumer as user nobody")
    def test_refused(self):
        # an abstract socket: no file permissions, the producer's access
        # control alone refuses another user
        sock = "@cudaipc-py-%d" % os.getpid()
        self.node("producer", sock, "--frames", "3000", "--width", str(W),
                  "--height", str(H), "--clients", "0", "--fps", "30",
                  "--sink", "backend=%s" % BACKEND)
        code = ("import sys, cudaipc\n"
                "try:\n"
                "    with cudaipc.Consumer(sys.argv[1], connect_timeout=20,\n"
                "                          reconnect=False) as c:\n"
                "        c.next_frame(timeout=20)\n"
                "except cudaipc.Refused as e:\n"
                "    print(type(e).__name__, isinstance(e, cudaipc.Error), e)\n"
                "    sys.exit(3)\n")
        nobody = pwd.getpwnam("nobody")
        # nobody's own group too: the producer's group is allowed
        r = subprocess.run([sys.executable, "-c", code, sock],
                           user=nobody.pw_uid, group=nobody.pw_gid,
                           extra_groups=[], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertTrue(r.stdout.startswith("Refused True "), r.stdout)
        self.assertIn("may not connect to this producer", r.stdout)

    @unittest.skipIf(GPU or not os.environ.get("CUDAIPC_ROGUE_PRODUCER"),
                     "rogue-producer (host backend)")
    def test_refused_metas_and_events_warned(self):
        # a producer whose metas break the rules, or whose events name
        # more new names than a process takes: every frame comes, and the
        # program is warned once a connection, in cuipcsrc's words
        rogue = os.environ["CUDAIPC_ROGUE_PRODUCER"]
        for mode, words in (("truncated", "sent frame metadata that breaks "
                             "the rules"),
                            ("names", "sent events this consumer refused")):
            sock = os.path.join(self.dir, mode + ".sock")
            p = subprocess.Popen([rogue, sock, "--frames", "30", "--mode",
                                  mode], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 env=NODE_ENV)
            self.procs.append(p)
            n = 0
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                with cudaipc.Consumer(sock, timeout=20,
                                      reconnect=False) as cams:
                    for frame in cams:
                        with frame:
                            n += 1
            self.finish(p)
            texts = [str(w.message) for w in said
                     if issubclass(w.category, RuntimeWarning)]
            self.assertEqual(n, 30, mode)
            self.assertEqual(len(texts), 1, (mode, texts))
            self.assertIn(words, texts[0])
            self.assertIn("The producer 'rogue-producer' (pid %d) on %s"
                          % (p.pid, sock), texts[0])

    def test_producer_lost(self):
        p = self.producer(1000, "--die-after", "5")
        with cudaipc.Consumer(self.sock, reconnect=False, timeout=20) as cams:
            with self.assertRaises(cudaipc.ProducerLost) as e:
                for frame in cams:
                    frame.close()
        self.assertIn("Lost the producer on " + self.sock, str(e.exception))
        p.wait()

    def test_regions_travel(self):
        p = self.producer(3, "--metas")
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            for frame in cams:
                with frame:
                    regions = frame.regions
                    self.assertEqual(len(regions), 2)
                    face = regions[0]
                    self.assertEqual((face.type, face.id, face.x, face.y,
                                      face.w, face.h),
                                     ("face", frame.offset, frame.offset,
                                      2 * frame.offset, 16, 9))
                    self.assertEqual(regions[1].parent_id, frame.offset)
                    # test-metas.h's object detection and its tracking
                    objects = frame.objects
                    if not ANALYTICS:
                        self.assertEqual(objects, [])
                        continue
                    self.assertEqual(len(objects), 1)
                    o = objects[0]
                    self.assertEqual((o.label, o.x, o.y, o.w, o.h,
                                      o.track_id),
                                     ("thing", frame.offset, 3, 40, 30,
                                      frame.offset))
                    self.assertAlmostEqual(o.confidence, 0.5, places=5)
        self.finish(p)

    @unittest.skipIf(GPU, "host backend")
    def test_dlpack_keeps_frame(self):
        p = self.producer(4)
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            # a capsule nobody consumes gives its frame back when dropped
            frame = cams.next_frame()
            self.assertEqual(frame.__dlpack_device__(), (1, 0))
            cap = frame.__dlpack__()
            frame.close()
            del frame
            gc.collect()
            self.assertEqual(cams.held, 1)
            del cap
            self.assertEqual(cams.held, 0)
            # an array of a consumed one holds it until it goes
            frame = cams.next_frame()
            cap = frame.planes[0].__dlpack__()
            frame.close()
            del frame
            gc.collect()
            self.assertEqual(cams.held, 1)
            # to_dlpack() gives such a capsule too
            frame = cams.next_frame()
            cap2 = frame.planes[1].to_dlpack()
            frame.close()
            del frame
            gc.collect()
            self.assertEqual(type(cap2).__name__, "PyCapsule")
            self.assertEqual(cams.held, 2)
            del cap2
            self.assertEqual(cams.held, 1)
            if numpy is not None and hasattr(numpy, "from_dlpack"):
                class Holder:
                    def __init__(self, c):
                        self.c = c

                    def __dlpack__(self, stream=None):
                        return self.c

                    def __dlpack_device__(self):
                        return (1, 0)
                arr = numpy.from_dlpack(Holder(cap))
                del cap
                gc.collect()
                self.assertEqual(arr.shape, (H, W))
                self.assertEqual(cams.held, 1)
                del arr
            else:
                del cap
            gc.collect()
            self.assertEqual(cams.held, 0)
        self.finish(p)

    @unittest.skipIf(GPU, "host backend")
    def test_plane_geometry(self):
        p = self.producer(1)
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            with cams.next_frame() as frame:
                y, uv = frame.planes
                self.assertEqual(y.shape, (H, W))
                self.assertEqual(uv.shape, ((H + 1) // 2, (W + 1) // 2, 2))
                # the frame's bytes, read-only, from the plane's offset
                ai = uv.__array_interface__
                self.assertTrue(ai["data"].readonly)
                self.assertEqual(ai["data"].nbytes, frame.size)
                self.assertEqual(ai["offset"], frame.plane_offsets[1])
                self.assertEqual(ai["strides"],
                                 (frame.plane_strides[1], 2, 1))
                del ai
                if numpy is not None:
                    self.assertEqual(numpy.asarray(uv).ctypes.data,
                                     frame.data_ptr + frame.plane_offsets[1])
        self.finish(p)


@unittest.skipUnless(GPU, "the cuda backend (gpu suite)")
class GpuTests(Case):
    def frames(self, n, check):
        # the defaults on both sides: the producer's stream is not live,
        # so every frame arrives, checked bit for bit
        p = self.producer(n)
        got = 0
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            for frame in cams:
                with frame:
                    check(frame)
                got += 1
        self.assertEqual(got, n)
        self.finish(p)

    def test_torch_from_dlpack(self):
        import torch

        def check(frame):
            y = torch.from_dlpack(frame.planes[0])
            self.assertEqual(y.device.type, "cuda")
            self.assertEqual(y.data_ptr(), frame.data_ptr)
            self.assertEqual(tuple(y.shape), (H, W))
            whole = torch.from_dlpack(frame)
            self.assertEqual(whole.cpu().numpy().tobytes(),
                             pattern(frame.offset))
            # the capsule, handed to torch without the stream exchange
            y2 = torch.from_dlpack(frame.planes[0].to_dlpack())
            self.assertEqual(y2.data_ptr(), frame.data_ptr)
            self.assertTrue(torch.equal(y2, y))
        self.frames(20, check)

    def test_tensor_keeps_frame(self):
        import torch
        p = self.producer(3, sink=LOSSLESS)
        with cudaipc.Consumer(self.sock, timeout=20) as cams:
            frame = cams.next_frame()
            offset = frame.offset
            y = torch.from_dlpack(frame.planes[0])
            whole = torch.from_dlpack(frame)
            frame.close()
            del frame
            gc.collect()
            # torch's tensors hold the slot, and it is as it was sent
            self.assertEqual(cams.held, 1)
            self.assertEqual(whole.cpu().numpy().tobytes(), pattern(offset))
            del whole
            self.assertEqual(cams.held, 1)
            del y
            gc.collect()
            self.assertEqual(cams.held, 0)
        self.finish(p)

    def test_torch_as_tensor_read_only(self):
        # __cuda_array_interface__ says the frame is read-only; torch has
        # no read-only tensors, and torch.as_tensor() refuses such an
        # interface (torch 2.x: TypeError "the read only flag is not
        # supported"). Refused or taken, the frame goes back once the
        # program lets go, frame after frame; from_dlpack is the way
        import torch
        p = self.producer(20, sink=LOSSLESS)
        got = 0
        with cudaipc.Consumer(self.sock, timeout=20, max_held=2) as cams:
            for frame in cams:
                offset, ptr = frame.offset, frame.data_ptr
                try:
                    y = torch.as_tensor(frame.planes[0], device="cuda")
                except TypeError as e:
                    self.assertIn("read only", str(e))
                    y = None
                if y is not None:
                    self.assertEqual(y.data_ptr(), ptr)
                    self.assertEqual(tuple(y.shape), (H, W))
                whole = torch.from_dlpack(frame.to_dlpack())
                frame.close()
                del frame
                self.assertEqual(whole.data_ptr(), ptr)
                self.assertEqual(whole.cpu().numpy().tobytes(),
                                 pattern(offset))
                del y, whole
                gc.collect()
                self.assertEqual(cams.held, 0)
                got += 1
        self.assertEqual(got, 20)
        self.finish(p)

    def test_cupy_from_dlpack_and_interface(self):
        import cupy

        def check(frame):
            uv = cupy.from_dlpack(frame.planes[1])
            self.assertEqual(uv.shape, (H // 2, W // 2, 2))
            self.assertEqual(uv.data.ptr, frame.data_ptr +
                             frame.plane_offsets[1])
            whole = cupy.asarray(frame)
            self.assertEqual(whole.data.ptr, frame.data_ptr)
            self.assertEqual(cupy.asnumpy(whole).tobytes(),
                             pattern(frame.offset))
        self.frames(20, check)


class ProducerTests(Case):
    def test_read_by_cuipcsrc(self):
        c = self.node("consumer", self.sock)
        with cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND) \
                as out:
            for _ in range(2000):
                if out.consumers:
                    break
                time.sleep(0.01)
            self.assertEqual(out.consumers, 1)
            for i in range(40):
                buf = bytearray(pattern(i))
                if GPU:
                    import torch
                    t = torch.frombuffer(buf, dtype=torch.uint8).cuda()
                    self.assertTrue(out.publish(t, pts=i * 33333333))
                elif numpy is not None and i % 2:
                    arr = numpy.frombuffer(bytes(buf), dtype=numpy.uint8)
                    self.assertTrue(out.publish(arr, pts=i * 33333333))
                else:
                    self.assertTrue(out.publish(buf, pts=i * 33333333))
            with self.assertRaises(cudaipc.Error):
                out.publish(bytearray(SIZE - 1))
            out.end()
            fields = self.finish(c)
            self.assertEqual(out.counts, (40, 0))
        self.assertEqual(fields["frames"], "40")
        self.assertEqual(fields["bad"], "0")

    def test_regions_and_objects_published(self):
        import threading
        got = []

        def read():
            with cudaipc.Consumer(self.sock, timeout=20, keep_all=True) \
                    as cams:
                for frame in cams:
                    with frame:
                        got.append((frame.offset, frame.regions,
                                    frame.objects))

        with cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND) \
                as out:
            reader = threading.Thread(target=read)
            reader.start()
            for _ in range(2000):
                if out.consumers:
                    break
                time.sleep(0.01)
            buf = bytearray(pattern(0))
            for i in range(5):
                regions = [cudaipc.Region("car", 10 * i, 20, 64, 48, id=i,
                                          confidence=0.25 * (i % 4)),
                           cudaipc.Region("plate", 10 * i + 4, 40, 16, 8,
                                          id=100 + i, parent_id=i)]
                objects = [cudaipc.Object("car", 10 * i, 20, 64, 48, 0.75,
                                          track_id=7 + i),
                           cudaipc.Object("person", 1, 2, 3, 4, 0.5)]
                if ANALYTICS:
                    self.assertTrue(out.publish(buf, pts=i, regions=regions,
                                                objects=objects))
                else:
                    with self.assertRaises(cudaipc.Error) as e:
                        out.publish(buf, regions=regions, objects=objects)
                    self.assertIn("without gstreamer-analytics",
                                  str(e.exception))
                    self.assertTrue(out.publish(buf, pts=i,
                                                regions=regions))
            # refused before anything is copied: a label too long
            with self.assertRaises(ValueError):
                out.publish(buf, regions=[cudaipc.Region("x" * 64)])
            out.end()
            reader.join(60)
            self.assertFalse(reader.is_alive())
        self.assertEqual([g[0] for g in got], list(range(5)))
        for i, regions, objects in got:
            self.assertEqual([(r.type, r.id, r.parent_id, r.x, r.y, r.w, r.h)
                              for r in regions],
                             [("car", i, 0, 10 * i, 20, 64, 48),
                              ("plate", 100 + i, i, 10 * i + 4, 40, 16, 8)])
            self.assertEqual(regions[0].confidence, 0.25 * (i % 4))
            self.assertIsNone(regions[1].confidence)
            if not ANALYTICS:
                self.assertEqual(objects, [])
                continue
            self.assertEqual([(o.label, o.x, o.y, o.w, o.h, o.track_id)
                              for o in objects],
                             [("car", 10 * i, 20, 64, 48, 7 + i),
                              ("person", 1, 2, 3, 4, None)])
            self.assertAlmostEqual(objects[0].confidence, 0.75, places=5)
            self.assertAlmostEqual(objects[1].confidence, 0.5, places=5)

    @unittest.skipIf(numpy is None, "numpy")
    def test_publish_memory_not_contiguous(self):
        # host memory that is not contiguous goes out as its contiguous
        # copy, which lives until the copy into the slot returned
        class HostTensor:
            """What publish() sees of a torch tensor in host memory:
            contiguous() is a new tensor, numpy() a view of it."""
            is_cuda = False

            def __init__(self, array):
                self.array = array

            def contiguous(self):
                return HostTensor(numpy.ascontiguousarray(self.array))

            def numpy(self):
                return self.array

        def not_contiguous(i):
            want = numpy.frombuffer(pattern(i), dtype=numpy.uint8)
            if i % 3 < 2:
                # every other byte of a wider array
                wide = numpy.zeros(2 * SIZE, dtype=numpy.uint8)
                wide[::2] = want
                arr = wide[::2]
            else:
                # a transposed view: the frame's rows are its columns
                rows = want.reshape(SIZE // W, W)
                arr = numpy.ascontiguousarray(rows.T).T
            self.assertFalse(arr.flags.c_contiguous)
            return HostTensor(arr) if i % 3 == 0 else arr

        c = self.node("consumer", self.sock)
        with cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND) \
                as out:
            for _ in range(2000):
                if out.consumers:
                    break
                time.sleep(0.01)
            for i in range(12):
                self.assertTrue(out.publish(not_contiguous(i), pts=i))
            out.end()
            fields = self.finish(c)
        self.assertEqual(fields["frames"], "12")
        self.assertEqual(fields["bad"], "0")

    def test_text_not_utf8_from_a_peer(self):
        # a region type and an object label that are not UTF-8, as a
        # program may publish them through the C API: read with U+FFFD
        # for each bad byte, never an exception
        got = []

        def read():
            with cudaipc.Consumer(self.sock, timeout=20, keep_all=True) \
                    as cams:
                for frame in cams:
                    with frame:
                        got.append((frame.regions, frame.objects))

        lib = cudaipc._lib.lib
        region = cudaipc._lib.Region(type=b"\xffcar\xfe", w=4, h=4,
                                     confidence=-1)
        obj = cudaipc._lib.Object(label=b"bus\xc3", w=4, h=4, track_id=-1)
        buf = (ctypes.c_char * SIZE)()
        with cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND) \
                as out:
            reader = threading.Thread(target=read)
            reader.start()
            for _ in range(2000):
                if out.consumers:
                    break
                time.sleep(0.01)
            self.assertEqual(lib.cudaipc_producer_publish_annotated(
                out._ptr, ctypes.addressof(buf), SIZE, 0, 0, 0,
                ctypes.byref(region), 1, ctypes.byref(obj),
                1 if ANALYTICS else 0), 0)
            out.end()
            reader.join(60)
        self.assertFalse(reader.is_alive())
        (regions, objects), = got
        self.assertEqual(regions[0].type, "\ufffdcar\ufffd")
        if ANALYTICS:
            self.assertEqual(objects[0].label, "bus\ufffd")

    def test_text_not_utf8_from_the_library(self):
        # a socket path that is not UTF-8 (bytes, or str as os.fsdecode()
        # gives it) goes to the library as it is, and comes back in its
        # error text with U+FFFD for each bad byte
        raw = os.fsencode(self.dir) + b"/\xff.sock"
        for path in (raw, os.fsdecode(raw)):
            with cudaipc.Consumer(path, connect_timeout=0.2) as cams:
                with self.assertRaises(cudaipc.NoProducer) as e:
                    cams.next_frame()
            self.assertIn("/\ufffd.sock", str(e.exception))

    def test_failed_constructors_leave_nothing_behind(self):
        # however __init__ fails, the object it leaves is collected in
        # silence: no "Exception ignored in __del__"
        makers = (
            lambda: cudaipc.Consumer(""),
            lambda: cudaipc.Consumer(None),
            lambda: cudaipc.Consumer(self.sock, leaky="sometimes"),
            lambda: cudaipc.Consumer(self.sock, name=3),
            lambda: cudaipc.Producer(None, "NV12", W, H, backend="host"),
            lambda: cudaipc.Producer(self.sock, "NV12", None, H),
            lambda: cudaipc.Producer(self.sock, "NV12", W, H, name=3),
            lambda: cudaipc.Producer(self.sock, "NV12", W, H, backend="gpu"),
            lambda: cudaipc.Producer(self.sock, "NOT_A_FORMAT", W, H,
                                     backend="host"),
            lambda: cudaipc.Producer(self.sock, "NV12", 0, 0,
                                     backend="host"))
        unraisable, hook = [], sys.unraisablehook
        sys.unraisablehook = unraisable.append
        try:
            for make in makers:
                with self.assertRaises((cudaipc.Error, ValueError,
                                        TypeError)):
                    make()
                gc.collect()
        finally:
            sys.unraisablehook = hook
        self.assertEqual(["%s: %s" % (u.exc_type.__name__, u.exc_value)
                          for u in unraisable], [])

    def test_closed(self):
        out = cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND)
        out.close()
        for call in (lambda: out.publish(bytearray(SIZE)), out.end,
                     lambda: out.consumers, lambda: out.counts):
            with self.assertRaises(ValueError) as e:
                call()
            self.assertEqual(str(e.exception), "the producer is closed")
        out.close()
        cams = cudaipc.Consumer(self.sock)
        cams.close()
        with self.assertRaises(ValueError) as e:
            cams.next_frame()
        self.assertEqual(str(e.exception), "the consumer is closed")
        self.assertEqual((cams.held, cams.dropped), (0, 0))
        cams.cancel()
        cams.close()

    def test_bad_caps(self):
        with self.assertRaises(cudaipc.Error) as e:
            cudaipc.Producer(self.sock, "NOT_A_FORMAT", 64, 48,
                             backend="host")
        self.assertIn("not fixed raw-video caps", str(e.exception))
        # frames of no bytes, which no publish() could ever match
        for w, h in ((0, 0), (64, 0), (0, 48)):
            with self.assertRaises(cudaipc.Error) as e:
                cudaipc.Producer(self.sock, "NV12", w, h, backend="host")
            self.assertIn("have no bytes", str(e.exception))


class ThreadTests(Case):
    """Consumers and producers shared by threads (docs/api.md, Python)."""

    def in_thread(self, fn, *args):
        """@fn(*args) in a thread: (the thread, [what it returned or
        raised])."""
        out = []

        def run():
            try:
                out.append(fn(*args))
            except Exception as e:  # noqa: BLE001 - the test looks at it
                out.append(e)
        t = threading.Thread(target=run)
        t.start()
        return t, out

    def test_close_while_next_frame_connects(self):
        cams = cudaipc.Consumer(self.sock, connect_timeout=5)
        t, out = self.in_thread(cams.next_frame)
        # the thread waits for a producer nobody starts
        time.sleep(0.3)
        start = time.monotonic()
        cams.close()
        # close() ended that wait, and returned once next_frame() did
        self.assertLess(time.monotonic() - start, 2)
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertIsInstance(out[0], cudaipc.Cancelled)
        with self.assertRaises(ValueError):
            cams.next_frame()
        self.assertEqual((cams.held, cams.dropped), (0, 0))
        cams.cancel()
        cams.close()

    def test_next_frame_from_two_threads(self):
        p = self.producer(200, sink=LOSSLESS)
        seen, errors = [], []

        def take(cams):
            while True:
                try:
                    frame = cams.next_frame(20)
                except cudaipc.EndOfStream:
                    return
                except cudaipc.Error as e:
                    errors.append(e)
                    return
                with frame:
                    if not GPU and frame.tobytes() != pattern(frame.offset):
                        errors.append("frame %d is not as sent" %
                                      frame.offset)
                    seen.append(frame.offset)

        with cudaipc.Consumer(self.sock, connect_timeout=20, reconnect=False,
                              keep_all=True) as cams:
            threads = [self.in_thread(take, cams)[0] for _ in range(2)]
            for t in threads:
                t.join(120)
        self.assertEqual(errors, [])
        # each frame once, over the one connection the producer saw
        self.assertEqual(sorted(seen), list(range(200)))
        out = self.finish(p)
        self.assertEqual((out["joined"], out["warnings"]), ("1", "0"))

    def test_close_from_a_signal_handler(self):
        # a handler runs in the main thread between two bytecodes, maybe
        # in the middle of a next_frame() or a frame's read: its close()
        # neither waits for that call (which would never return) nor frees
        # under it; the loop ends with Cancelled or ValueError
        p = self.producer(100000, "--fps", "500", "--live")
        rng = random.Random(7)
        old = signal.getsignal(signal.SIGALRM)
        try:
            for _ in range(20):
                cams = cudaipc.Consumer(self.sock, connect_timeout=20,
                                        timeout=20)
                frames = []

                def stop(*_):
                    cams.close()
                    for f in frames:
                        f.close()
                signal.signal(signal.SIGALRM, stop)
                signal.setitimer(signal.ITIMER_REAL,
                                 rng.uniform(0.05, 0.15))
                with self.assertRaises((cudaipc.Cancelled, ValueError)):
                    for frame in cams:
                        frames[:] = [frame]
                        if not GPU:
                            frame.tobytes()
                        frame.regions
                        frame.close()
                signal.setitimer(signal.ITIMER_REAL, 0)
                with self.assertRaises(ValueError):
                    cams.next_frame()
                del frames[:]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        p.kill()

    @unittest.skipIf(numpy is None or GPU, "numpy, host backend")
    def test_frame_closed_while_another_thread_reads_it(self):
        # each read sees the frame whole or closed (ValueError), never a
        # released one
        p = self.producer(40, sink=LOSSLESS)
        bad = []

        def read(frame, stop):
            want = pattern(frame.offset)
            while not stop.is_set():
                try:
                    got = bytes(numpy.asarray(frame.planes[0]).tobytes()) + \
                        numpy.from_dlpack(frame.planes[1]).tobytes() \
                        if hasattr(numpy, "from_dlpack") else frame.tobytes()
                    frame.regions
                except ValueError:
                    return
                if got != want[:len(got)]:
                    bad.append(frame.offset)

        with cudaipc.Consumer(self.sock, connect_timeout=20, timeout=20,
                              keep_all=True) as cams:
            for frame in cams:
                stop = threading.Event()
                t, _ = self.in_thread(read, frame, stop)
                time.sleep(0.002)
                frame.close()
                stop.set()
                t.join(10)
        self.assertEqual(bad, [])
        self.finish(p)

    def test_publish_from_threads(self):
        # eight threads publish at once: each frame goes out whole, with
        # its own timestamp and the next offset, read by a consumer that
        # keeps every frame (the producer, not live, waits for it)
        buf = bytearray(pattern(0))
        got = []

        def read():
            with cudaipc.Consumer(self.sock, connect_timeout=20,
                                  keep_all=True, timeout=20) as cams:
                for frame in cams:
                    with frame:
                        got.append((frame.offset, frame.pts))

        with cudaipc.Producer(self.sock, "NV12", W, H,
                              backend=BACKEND) as out:
            reader, failed = self.in_thread(read)
            while not out.consumers and reader.is_alive():
                time.sleep(0.01)

            def publish(k):
                return [out.publish(buf, pts=k * 1000 + i)
                        for i in range(100)]
            runs = [self.in_thread(publish, k) for k in range(8)]
            for t, _ in runs:
                t.join(120)
            for _, said in runs:
                self.assertEqual(said, [[True] * 100])
            self.assertEqual(out.counts, (800, 0))
            out.end()
            reader.join(60)
        self.assertEqual(failed, [None])
        self.assertEqual(sorted(o for o, _ in got), list(range(800)))
        self.assertEqual(sorted(t for _, t in got),
                         [k * 1000 + i for k in range(8) for i in range(100)])

    def test_close_while_publish_waits(self):
        buf = bytearray(pattern(0))
        out = cudaipc.Producer(self.sock, "NV12", W, H, backend=BACKEND,
                               ring_size=2)

        def publish_three():
            while not out.consumers:
                time.sleep(0.01)
            said = []
            try:
                for i in range(3):
                    said.append(out.publish(buf, pts=i))
            except cudaipc.Error as e:
                said.append(e)
            return said

        # the frames it is not given yet keep their slots: with the first
        # held and the second waiting here, the ring of two is full, and
        # the stream, not live, waits as long as it takes
        with cudaipc.Consumer(self.sock, connect_timeout=20,
                              keep_all=True) as cams:
            t, said = self.in_thread(publish_three)
            with cams.next_frame(20):
                time.sleep(0.3)
                start = time.monotonic()
                out.close()
                self.assertLess(time.monotonic() - start, 2)
                t.join(10)
        self.assertFalse(t.is_alive())
        self.assertEqual(said[0][:2], [True, True])
        self.assertIsInstance(said[0][2], cudaipc.Cancelled)


def _gst():
    """GStreamer through PyGObject, or None where python3-gi lacks it."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
    except (ImportError, ValueError):
        return None
    Gst.init(None)
    return Gst


class OneProcessTests(Case):
    """A pipeline of the plugin and the package in one process, as an
    application that mixes them runs: both over one copy of the library."""

    def setUp(self):
        super().setUp()
        self.Gst = _gst()
        if self.Gst is None:
            self.skipTest("no GStreamer through PyGObject (python3-gst-1.0)")

    def run_to_eos(self, pipeline):
        Gst = self.Gst
        msg = pipeline.get_bus().timed_pop_filtered(
            60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        pipeline.set_state(Gst.State.NULL)
        self.assertIsNotNone(msg, "no EOS within 60 s")
        if msg.type == Gst.MessageType.ERROR:
            self.fail(msg.parse_error()[0].message)

    def test_cuipcsrc_beside_consumer(self):
        Gst = self.Gst
        p = self.producer(30, "--clients", "2", sink=LOSSLESS)
        pipeline = Gst.parse_launch(
            "cuipcsrc socket-path=%s max-held=0 connect-timeout=20000 ! "
            "fakesink name=sink sync=false signal-handoffs=true" % self.sock)
        pushed = []
        pipeline.get_by_name("sink").connect(
            "handoff", lambda sink, buf, pad: pushed.append(buf.offset))
        pipeline.set_state(Gst.State.PLAYING)
        got = []
        with cudaipc.Consumer(self.sock, connect_timeout=20,
                              reconnect=False, keep_all=True) as c:
            for frame in c:
                with frame:
                    self.assertEqual(frame.tobytes(), pattern(frame.offset))
                    got.append(frame.offset)
        self.run_to_eos(pipeline)
        self.assertEqual(got, list(range(30)))
        self.assertEqual(pushed, list(range(30)))
        self.assertEqual(self.finish(p)["dropped"], "0")

    def roi_through_cuipcsink(self, roi_type, sink=""):
        """The region types the package reads of a frame with a region of
        @roi_type that a cuipcsink with properties @sink sent."""
        Gst = self.Gst
        gi = __import__("gi")
        gi.require_version("GstVideo", "1.0")
        from gi.repository import GstVideo
        pipeline = Gst.parse_launch(
            "appsrc name=src format=time caps=video/x-raw,format=NV12,"
            "width=%d,height=%d,framerate=30/1 ! cuipcsink socket-path=%s "
            "backend=host wait-for-connection=true %s %s"
            % (W, H, self.sock, LOSSLESS, sink))
        pipeline.set_state(Gst.State.PLAYING)
        src = pipeline.get_by_name("src")
        buf = Gst.Buffer.new_wrapped(pattern(0))
        buf.pts = 0
        GstVideo.buffer_add_video_region_of_interest_meta(buf, roi_type, 1,
                                                          2, 3, 4)
        self.assertEqual(src.emit("push-buffer", buf), Gst.FlowReturn.OK)
        src.emit("end-of-stream")
        with cudaipc.Consumer(self.sock, connect_timeout=20,
                              reconnect=False, timeout=20) as cams:
            with cams.next_frame() as frame:
                types = [r.type for r in frame.regions]
        self.run_to_eos(pipeline)
        return types

    def test_region_type_cut_in_a_character(self):
        # a region type of 80 bytes of UTF-8 is cut to the 63 bytes a
        # Region of the library holds, in the middle of a character: read
        # with U+FFFD in place of its half
        self.assertEqual(self.roi_through_cuipcsink("\u00e9" * 40),
                         ["\u00e9" * 31 + "\ufffd"])

    def test_metas_by_a_meta_type_name(self):
        # cuipcsink's metas names a meta by its own type name, which
        # stands for its API type
        self.assertEqual(self.roi_through_cuipcsink(
            "car", "metas=GstVideoCropMeta,GstVideoRegionOfInterestMeta"),
            ["car"])

    def test_metas_naming_no_api_refused(self):
        Gst = self.Gst
        pipeline = Gst.parse_launch(
            "appsrc caps=video/x-raw,format=NV12,width=%d,height=%d,"
            "framerate=30/1 ! cuipcsink socket-path=%s backend=host "
            "metas=GstNoSuchThingMeta" % (W, H, self.sock))
        self.assertEqual(pipeline.set_state(Gst.State.PLAYING),
                         Gst.StateChangeReturn.FAILURE)
        msg = pipeline.get_bus().timed_pop_filtered(
            5 * Gst.SECOND, Gst.MessageType.ERROR)
        pipeline.set_state(Gst.State.NULL)
        self.assertIsNotNone(msg)
        self.assertIn("presumably GstNoSuchThingMetaAPI",
                      msg.parse_error()[0].message)

    def test_cuipcsink_beside_producer(self):
        Gst = self.Gst
        lib_sock = self.sock + ".lib"
        pipeline = Gst.parse_launch(
            "appsrc name=src format=time caps=video/x-raw,format=NV12,"
            "width=%d,height=%d,framerate=30/1 ! cuipcsink socket-path=%s "
            "backend=host wait-for-connection=true %s"
            % (W, H, self.sock, LOSSLESS))
        from_sink = self.node("consumer", self.sock)
        from_lib = self.node("consumer", lib_sock)
        pipeline.set_state(Gst.State.PLAYING)
        src = pipeline.get_by_name("src")
        with cudaipc.Producer(lib_sock, "NV12", W, H, backend="host") as out:
            for _ in range(2000):
                if out.consumers:
                    break
                time.sleep(0.01)
            self.assertEqual(out.consumers, 1)
            for i in range(30):
                buf = Gst.Buffer.new_wrapped(pattern(i))
                buf.offset = i
                buf.pts = i * Gst.SECOND // 30
                self.assertEqual(src.emit("push-buffer", buf),
                                 Gst.FlowReturn.OK)
                self.assertTrue(out.publish(bytearray(pattern(i)),
                                            pts=i * 33333333))
            src.emit("end-of-stream")
            out.end()
            self.run_to_eos(pipeline)
            for c in (from_sink, from_lib):
                fields = self.finish(c)
                self.assertEqual(fields["frames"], "30")
                self.assertEqual(fields["bad"], "0")
            self.assertEqual(out.counts, (30, 0))

if __name__ == "__main__":
    print("cudaipc from", os.path.dirname(cudaipc.__file__), "numpy",
          numpy.__version__ if numpy else "absent", "python",
          sys.version.split()[0])
    unittest.main(verbosity=2)
