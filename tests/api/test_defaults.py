# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python package's defaults against the elements' (the api suite).

Consumer's and Producer's keyword defaults are cuipcsrc's and cuipcsink's
property defaults, read from gst-inspect-1.0; a Producer left to its
default backend chooses as cuipcsink does (host here without a GPU, cuda
in the gpu suite); a Consumer whose producer was killed for good ends
after reconnect_timeout with NoProducer that says so, and one told to wait
for ever (None) does not.
"""

import inspect
import os
import re
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cudaipc import BACKEND, Case, H, W  # noqa: E402

import cudaipc  # noqa: E402


def element_defaults(factory):
    """{property: its default as gst-inspect-1.0 prints it (an enum's
    nick)} of @factory."""
    # GStreamer's tool, not the build's: this process's environment (the
    # sanitizer's runtime preloaded under the sanitizer pass)
    out = subprocess.run(["gst-inspect-1.0", factory], capture_output=True,
                         text=True, timeout=60, check=True)
    props, name = {}, None
    for line in out.stdout.splitlines():
        m = re.match(r"^  (\S+)\s+: ", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r'Default: -?\d+, "([^"]*)"|Default: (\S+)', line)
        if name and m and name not in props:
            props[name] = m.group(1) if m.group(1) is not None \
                else m.group(2)
    return props


def keyword_defaults(cls):
    return {k: p.default for k, p in
            inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


def ms(seconds):
    return str(int(seconds * 1000))


class DefaultsTests(Case):
    def test_consumer_defaults_are_cuipcsrc_s(self):
        src = element_defaults("cuipcsrc")
        py = keyword_defaults(cudaipc.Consumer)
        self.assertEqual(str(py["device_id"]), src["device-id"])
        self.assertEqual(ms(py["connect_timeout"]), src["connect-timeout"])
        self.assertEqual(str(py["reconnect"]).lower(), src["reconnect"])
        self.assertEqual(ms(py["reconnect_timeout"]),
                         src["reconnect-timeout"])
        self.assertEqual(str(py["max_held"]), src["max-held"])
        self.assertEqual(str(py["peer_access"]).lower(), src["peer-access"])
        self.assertEqual(py["leaky"], src["leaky-type"])

    def test_producer_defaults_are_cuipcsink_s(self):
        sink = element_defaults("cuipcsink")
        py = keyword_defaults(cudaipc.Producer)
        self.assertEqual(py["backend"], sink["backend"])
        self.assertEqual(str(py["device_id"]), sink["device-id"])
        self.assertEqual(str(py["ring_size"]), sink["ring-size"])
        self.assertEqual(py["on_full"], sink["on-full"])
        self.assertEqual(ms(py["full_timeout"]), sink["full-timeout"])
        self.assertEqual(str(py["socket_mode"]), sink["socket-mode"])

    def usable_backend(self):
        """"cuda" where a producer of the cuda backend can be made here
        (a GPU machine, whichever suite runs this), else "host"."""
        try:
            cudaipc.Producer(self.sock + "-probe", "NV12", W, H,
                             backend="cuda").close()
        except cudaipc.Error as e:
            self.assertNotEqual(BACKEND, "cuda", str(e))
            return "host"
        return "cuda"

    def test_producer_backend_auto(self):
        want = self.usable_backend()
        with cudaipc.Producer(self.sock, "NV12", W, H) as out:
            # what auto chose, as cuipcsink chooses
            self.assertEqual(out.backend, want)
            got = []

            def feed():
                # until the consumer, which connects in next_frame(),
                # has one: frames before it went to nobody
                while not got:
                    out.publish(bytearray(W * H * 3 // 2), timeout=0.5)
                    time.sleep(0.05)
            t = threading.Thread(target=feed)
            with cudaipc.Consumer(self.sock, connect_timeout=20,
                                  reconnect=False) as cams:
                t.start()
                try:
                    with cams.next_frame(timeout=20) as frame:
                        self.assertEqual(frame.backend, want)
                finally:
                    got.append(True)
                    t.join(20)
            self.assertFalse(t.is_alive())
        with self.assertRaises(ValueError):
            cudaipc.Producer(self.sock, "NV12", W, H, backend="gpu")

    def test_producer_gone_for_good(self):
        p = self.producer(1000, "--fps", "30", "--die-after", "5")
        with cudaipc.Consumer(self.sock, connect_timeout=20,
                              reconnect_timeout=1, timeout=20) as cams:
            cams.next_frame().close()
            p.wait(60)
            start = time.monotonic()
            with self.assertRaises(cudaipc.NoProducer) as e:
                for frame in cams:
                    frame.close()
            self.assertLess(time.monotonic() - start, 10)
        self.assertIn("stayed away for 1 s after it was lost",
                      str(e.exception))
        # the package's own keyword, in the element's words
        self.assertIn("raise reconnect_timeout to wait longer (None waits "
                      "for ever)", str(e.exception))

    def test_reconnect_timeout_none_waits_for_ever(self):
        p = self.producer(1000, "--fps", "30", "--die-after", "5")
        cams = cudaipc.Consumer(self.sock, connect_timeout=20,
                                reconnect_timeout=None)
        cams.next_frame().close()
        p.wait(60)
        out = []

        def drain():
            try:
                while True:
                    cams.next_frame().close()
            except cudaipc.Error as e:
                out.append(e)
        t = threading.Thread(target=drain)
        t.start()
        # past 1 s and the library's own default would not tell: a wait
        # that ended would have raised by now with reconnect_timeout 1
        time.sleep(3)
        self.assertTrue(t.is_alive(), out)
        cams.close()
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertIsInstance(out[0], cudaipc.Cancelled)


if __name__ == "__main__":
    unittest.main(verbosity=2)
