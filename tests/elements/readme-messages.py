# SPDX-License-Identifier: LGPL-2.1-or-later
"""elements suite: every message README.md's Troubleshooting table quotes
is one the code prints.

Each quoted message (a `...` of three words or more in the table) becomes
a pattern: PATH, CAPS, ELEMENT and a lone capital (N, M, U, G, P, X, Y)
stand for a value, "..." for any text. The messages a pipeline here can
bring about with the host backend are brought about, in this process or
in ipc-node (a consumer of another user, a producer whose caps change),
and each text posted must be one the table quotes, word for word. A quote
no run here posts (the CUDA driver's, a stopped producer's) must at least
be in the source: each of its pieces between values and sentence joints
in one of the C strings of gst/ and plugin/.

Run by meson with the elements' environment (GST_PLUGIN_PATH_1_0,
CUDAIPC_IPC_NODE); the source tree is this file's ../..
"""

import ctypes
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import sys
import unittest

# Under the sanitizer pass this interpreter, which loads the plugin,
# starts again with the sanitizer's runtime loaded; ipc-node without it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from sanitizer_preload import node_env, reexec_preloaded  # noqa: E402

reexec_preloaded()

try:
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst  # noqa: E402
except (ImportError, ValueError) as e:
    # meson's exit status for a skipped test
    print("SKIP: no PyGObject with GStreamer (python3-gst-1.0): %s" % e)
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

VALUE = {"PATH": r"\S+", "CAPS": r".+?", "ELEMENT": r"\S+"}
# a value or any text in a quote
HOLE = r"\.\.\.|\b(?:PATH|CAPS|ELEMENT|[A-Z])\b"


def troubleshooting_quotes(path):
    """The messages quoted in the table of the Troubleshooting section."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Troubleshooting\n(.*?)^## ", text, re.M | re.S)
    if m is None:
        raise AssertionError("README.md has no Troubleshooting section")
    quotes = []
    for line in m.group(1).splitlines():
        if not line.startswith("|") or line.startswith("| ---"):
            continue
        for q in re.findall(r"`([^`]+)`", line):
            if len(q.split()) >= 3:
                quotes.append(q)
    return quotes


def pattern(quote):
    """A regular expression of a quoted message."""
    out = []
    for tok in re.split("(" + HOLE + ")", quote):
        if tok == "...":
            out.append(r".*?")
        elif tok in VALUE:
            out.append(VALUE[tok])
        elif re.fullmatch(r"[A-Z]", tok):
            out.append(r"\S+")
        else:
            out.append(re.escape(tok))
    return re.compile("".join(out), re.S)


class CStrings:
    """Every C string of the sources, adjacent literals joined: its pieces
    between printf conversions, those of them a conversion follows, and
    the strings without any (what a %s may be given)."""

    def __init__(self, folders):
        self.pieces, self.before_value, self.whole = [], [], []
        lit = r'"((?:[^"\\\n]|\\.)*)"'
        # runs of literals with only blanks or format macros between
        run = re.compile(lit + r'(?:\s*(?:G_G\w+_FORMAT|GST_\w+_FORMAT'
                         r'|PRI\w+)?\s*' + lit + r')*')
        for folder in folders:
            for dirpath, _, files in os.walk(folder):
                for name in files:
                    if name.endswith((".c", ".h")):
                        with open(os.path.join(dirpath, name),
                                  encoding="utf-8") as f:
                            self._add(f.read(), lit, run)

    def _add(self, src, lit, run):
        for m in run.finditer(src):
            joined = "".join(re.findall(lit, m.group(0)))
            joined = joined.replace('\\"', '"').replace("\\n", "\n")
            parts = re.split(r"%(?:[-0-9.lhz]*[a-zA-Z])?", joined)
            self.pieces.extend(parts)
            self.before_value.extend(parts[:-1])
            if len(parts) == 1:
                self.whole.append(joined)

    def has(self, piece):
        """Whether @piece is in one of the strings, or is the end of one
        up to a conversion followed by the start of a string without any
        (a literal given for a %s)."""
        if any(piece in s for s in self.pieces):
            return True
        for i in range(1, len(piece)):
            left, right = piece[:i], piece[i:]
            if (any(s.endswith(left) for s in self.before_value) and
                    any(s.startswith(right) for s in self.whole)):
                return True
        return False


def static_pieces(quote):
    """The fixed pieces of a quote: between its values, and split at the
    joints where the code puts texts together (": ", "; ")."""
    parts = re.split(HOLE, quote)
    pieces = []
    for part in parts:
        for piece in re.split(r": |; ", part):
            if len(piece.strip()) >= 4:
                pieces.append(piece)
    return pieces


class Runner:
    """Pipelines in this process, and the texts of their errors and
    warnings."""

    def __init__(self):
        self.pipes = []
        self.texts = []

    def start(self, desc):
        p = Gst.parse_launch(desc)
        p.set_state(Gst.State.PLAYING)
        self.pipes.append(p)
        return p

    def collect(self, seconds, until_error=None):
        """Reads every bus for @seconds, or until @until_error posts an
        error."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for p in self.pipes:
                msg = p.get_bus().timed_pop_filtered(
                    20 * Gst.MSECOND,
                    Gst.MessageType.ERROR | Gst.MessageType.WARNING)
                if msg is None:
                    continue
                if msg.type == Gst.MessageType.ERROR:
                    err, _ = msg.parse_error()
                else:
                    err, _ = msg.parse_warning()
                self.texts.append(err.message)
                if p is until_error and msg.type == Gst.MessageType.ERROR:
                    return err.message
        return None

    def stop(self):
        for p in self.pipes:
            p.set_state(Gst.State.NULL)
        self.pipes = []


def node(*args, user=None):
    """ipc-node with @args; its "error from ...: TEXT (debug)" lines."""
    argv = [os.environ["CUDAIPC_IPC_NODE"]] + list(args)
    if user:
        argv += ["--as-user", user]
    return subprocess.Popen(argv, env=node_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def node_errors(proc, timeout=60):
    _, err = proc.communicate(timeout=timeout)
    # "error from NAME: TEXT (FILE.c(LINE): ...", the debug on more lines
    return [m.group(1) for m in
            re.finditer(r"^error from \S+: (.*?) \(\S+\.c\(\d+\): ", err,
                        re.M)]


def can_be_nobody():
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        return False
    return os.getuid() == 0


class ReadmeMessages(unittest.TestCase):
    quotes = troubleshooting_quotes(os.path.join(ROOT, "README.md"))
    posted = []                 # (scenario, text): every text posted

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cudaipc-readme-")
        os.chmod(cls.dir, 0o755)
        cls.tag = "cudaipc-readme-%d" % os.getpid()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.r = Runner()

    def tearDown(self):
        self.r.stop()

    def documented(self, scenario, text):
        """@text, posted by @scenario, is quoted in the table."""
        self.posted.append((scenario, text))
        matches = [q for q in self.quotes if pattern(q).fullmatch(text)]
        self.assertTrue(matches, "%s: README.md's Troubleshooting table "
                        "quotes no message like %r" % (scenario, text))

    def producer(self, sock, props="", caps="format=NV12,width=64,height=48"):
        return self.r.start(
            "videotestsrc is-live=true ! video/x-raw,%s,framerate=30/1 ! "
            "cuipcsink socket-path=%s backend=host %s" % (caps, sock, props))

    def test_no_producer(self):
        c = self.r.start("cuipcsrc socket-path=@%s-none connect-timeout=200 "
                         "! fakesink" % self.tag)
        text = self.r.collect(10, until_error=c)
        self.assertIsNotNone(text)
        self.documented("no producer", text)

    def test_not_negotiated(self):
        sock = "@%s-caps" % self.tag
        self.producer(sock)
        c = self.r.start("cuipcsrc socket-path=%s connect-timeout=20000 ! "
                         "video/x-raw,format=I420 ! fakesink" % sock)
        text = self.r.collect(20, until_error=c)
        self.assertIsNotNone(text)
        self.documented("not negotiated", text)

    def test_caps_change(self):
        # the producer's frames grow from 64x48 to 96x64 after 10: this
        # consumer takes only the first size
        sock = "@%s-switch" % self.tag
        p = node("producer", sock, "--frames", "40", "--fps", "30",
                 "--clients", "1", "--width", "64", "--height", "48",
                 "--switch-at", "10", "--width2", "96", "--height2", "64",
                 "--sink", "backend=host")
        c = self.r.start("cuipcsrc socket-path=%s connect-timeout=20000 ! "
                         "video/x-raw,width=64,height=48 ! fakesink" % sock)
        text = self.r.collect(30, until_error=c)
        p.kill()
        p.communicate()
        self.assertIsNotNone(text)
        self.assertIn("width=96", text)
        self.documented("caps change", text)

    def test_producer_lost(self):
        sock = "@%s-lost" % self.tag
        prod = self.producer(sock)
        c = self.r.start("cuipcsrc socket-path=%s connect-timeout=20000 "
                         "reconnect=false ! fakesink" % sock)
        time.sleep(1)
        prod.set_state(Gst.State.NULL)
        self.r.pipes.remove(prod)
        text = self.r.collect(20, until_error=c)
        self.assertIsNotNone(text)
        self.documented("producer lost", text)

    def test_producer_lost_reconnecting(self):
        sock = "@%s-lost2" % self.tag
        prod = self.producer(sock)
        c = self.r.start("cuipcsrc socket-path=%s connect-timeout=20000 "
                         "reconnect-timeout=300 ! fakesink" % sock)
        time.sleep(1)
        prod.set_state(Gst.State.NULL)
        self.r.pipes.remove(prod)
        self.r.collect(20, until_error=c)
        self.assertTrue(self.r.texts)
        for text in self.r.texts:
            self.documented("producer lost, reconnecting", text)

    def test_other_user_refused(self):
        if not can_be_nobody():
            self.skipTest("not root, or no user nobody: a consumer of "
                          "another user is not run")
        sock = "@%s-user" % self.tag
        self.producer(sock)
        c = node("consumer", sock, "--src",
                 "reconnect=false connect-timeout=20000", user="nobody")
        errors = node_errors(c)
        self.r.collect(1)
        self.assertTrue(errors, "the consumer of user nobody got no error")
        for text in errors:
            self.documented("refused user, the consumer", text)
        self.assertTrue(self.r.texts, "the producer warned of nothing")
        for text in self.r.texts:
            self.documented("refused user, the producer", text)

    def test_socket_permission(self):
        if not can_be_nobody():
            self.skipTest("not root, or no user nobody: a consumer of "
                          "another user is not run")
        sock = os.path.join(self.dir, "perm.sock")
        self.producer(sock, "socket-mode=0600")
        c = node("consumer", sock, "--src",
                 "reconnect=false connect-timeout=20000", user="nobody")
        errors = node_errors(c)
        self.assertTrue(errors, "the consumer of user nobody got no error")
        for text in errors:
            self.documented("socket permission", text)

    def test_socket_name_too_long(self):
        sock = os.path.join(self.dir, "x" * 120)
        p = self.producer(sock)
        text = self.r.collect(10, until_error=p)
        self.r.stop()
        c = self.r.start("cuipcsrc socket-path=%s ! fakesink" % sock)
        text2 = self.r.collect(10, until_error=c)
        for t in (text, text2):
            self.assertIsNotNone(t)
            self.documented("socket name too long", t)

    def test_dangling_symlink(self):
        sock = os.path.join(self.dir, "dangling.sock")
        os.symlink(os.path.join(self.dir, "nothing"), sock)
        p = self.producer(sock)
        text = self.r.collect(10, until_error=p)
        os.unlink(sock)
        self.assertIsNotNone(text)
        self.documented("dangling symlink", text)

    def test_live_producer(self):
        sock = "@%s-live" % self.tag
        self.producer(sock)
        self.r.collect(1)
        second = self.producer(sock)
        text = self.r.collect(10, until_error=second)
        self.assertIsNotNone(text)
        self.documented("another producer", text)

    def test_device_id_with_host(self):
        self.producer("@%s-dev" % self.tag, "device-id=1")
        self.r.collect(1)
        self.assertTrue(self.r.texts)
        for text in self.r.texts:
            self.documented("device-id with host", text)

    def test_no_cuda_driver(self):
        try:
            ctypes.CDLL("libcuda.so.1")
            driver = True
        except OSError:
            driver = False
        if not driver:
            p = self.producer("@%s-cuda" % self.tag, "backend=cuda")
            text = self.r.collect(10, until_error=p)
            self.assertIsNotNone(text)
            self.documented("no CUDA driver", text)
            return
        # with a driver, the text as the loader would write it
        with open(os.path.join(ROOT, "gst", "device", "cuda-loader.c"),
                  encoding="utf-8") as f:
            src = f.read()
        lib = re.search(r'#define CUDA_LIBNAME "([^"]+)"', src).group(1)
        fmt = re.search(r'"(no CUDA driver: cannot open %s \(%s\); )"\s*'
                        r'"([^"]*)"', src)
        self.assertIsNotNone(fmt, "the loader's words changed")
        self.documented("no CUDA driver (from the source)",
                        (fmt.group(1) + fmt.group(2)) % (lib, "a reason"))

    def test_z_quotes_not_posted_are_in_the_source(self):
        # (after the others) what no pipeline here brought about (the CUDA
        # driver's, a stopped producer's) is at least in the code, piece
        # by piece
        strings = CStrings([os.path.join(ROOT, "gst"),
                            os.path.join(ROOT, "plugin")])
        # and the system's words, which the code quotes (g_strerror)
        strings.pieces += [os.strerror(n) for n in range(1, 134)]
        for quote in self.quotes:
            if any(pattern(quote).fullmatch(t) for _, t in self.posted):
                continue
            for piece in static_pieces(quote):
                self.assertTrue(strings.has(piece),
                                "README.md quotes %r, but no string of the "
                                "code has %r" % (quote, piece))

if __name__ == "__main__":
    Gst.init(None)
    unittest.main(verbosity=2)
