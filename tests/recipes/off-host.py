# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/recipes.md over loopback (the recipes suite): the server and client
lines it marks (<!-- off-host.py: MODE server -->, ... client), run as
written but for addresses, ports and the socket, host backend.

    off-host.py rtsp|rtp|srt

Three processes, as on a real host: a producer (this script, `producer`:
cudaipc.Producer, NV12, its frame number stamped into the pixels), the
serving pipeline (the recipe's server line), and this process as the
client on 127.0.0.1: the recipe's client line up to its decoder, then
the decoder GStreamer has (avdec_h264, else openh264dec) and an appsink;
it reads the number back from every frame. A client that was there from
the start must get every frame the producer published, in order; for
RTSP a second client joins half-way through the stream and must get
every frame from the key frame it started at to the end, with that key
frame at most a key interval (and a second of set-up) after it joined:
one encoder serves both (shared media). Ports are chosen free at run
time. Prints each client's latency from publishing to the decoded frame.
Exits 77 where GStreamer lacks an element the recipe needs, and says
which.
"""

import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time

W, H, FPS = 320, 240, 30
# the frames a client asks for, 0 .. FRAMES - 1; then the stream goes on
# for TAIL more, as a camera's does, so that what a muxer or a parser holds
# back reaches the client
FRAMES = 150
TAIL = 2 * 30
BITS = 16
BLOCK = 16          # the stamp: BITS blocks of BLOCK x 2*BLOCK, and below
TOP = 16            # each its complement, from (TOP, TOP)
TIMEOUT = 90
SOURCE = os.environ.get("CUDAIPC_SOURCE_ROOT",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
RECIPES = os.path.join(SOURCE, "docs", "recipes.md")
# what the recipes' lines say, replaced here
SOCKET = "/tmp/cam0.sock"
DECODER = "avdec_h264"

NEEDS = {
    "rtsp": ["rtspsrc", "rtph264pay", "rtph264depay"],
    "rtp": ["udpsrc", "udpsink", "rtph264pay", "rtph264depay",
            "rtpjitterbuffer"],
    "srt": ["srtsrc", "srtsink", "mpegtsmux", "tsdemux"],
}
COMMON = ["cuipcsrc", "x264enc", "videoconvert", "h264parse", "appsink"]
DECODERS = ["avdec_h264", "openh264dec"]


def stamp(luma, n):
    """Writes @n into the luma plane (a bytearray W wide)."""
    for bit in range(BITS):
        on = (n >> bit) & 1
        x = TOP + bit * BLOCK
        for row in range(2 * BLOCK):
            for half, value in ((0, on), (2 * BLOCK, 1 - on)):
                at = (TOP + half + row) * W + x
                luma[at:at + BLOCK] = (b"\xeb" if value else b"\x10") * BLOCK


def read_stamp(data, stride):
    """The number stamped in a decoded GRAY8 frame, or None where the two
    copies disagree (a frame decoded wrong)."""
    n = 0
    for bit in range(BITS):
        x = TOP + bit * BLOCK + BLOCK // 2
        hi = data[(TOP + BLOCK) * stride + x]
        lo = data[(TOP + 3 * BLOCK) * stride + x]
        if (hi > 128) == (lo > 128):
            return None
        n |= (hi > 128) << bit
    return n


def producer(path, frames):
    """The producer process: waits for its consumer (the serving pipeline),
    then publishes @frames stamped frames at FPS; not live, so that the
    consumer gets every one."""
    import cudaipc
    frame = bytearray(b"\x80" * (W * H * 3 // 2))
    with cudaipc.Producer(path, "NV12", W, H, FPS, backend="host",
                          on_full="wait", live=False) as out:
        deadline = time.monotonic() + TIMEOUT
        while out.consumers < 1:
            if time.monotonic() > deadline:
                sys.exit("producer: nobody connected")
            time.sleep(0.01)
        start = time.monotonic()
        print(int(start * 1e9), flush=True)
        for i in range(frames + TAIL):
            stamp(frame, i)
            out.publish(frame, pts=i * 1000000000 // FPS)
            time.sleep(max(0.0, start + (i + 1) / FPS - time.monotonic()))
        out.end()


def recipe(name):
    """The command docs/recipes.md marks as @name, its lines joined."""
    marker = "<!-- off-host.py: %s -->" % name
    try:
        with open(RECIPES) as f:
            lines = f.read().splitlines()
        i = lines.index(marker) + 1
    except (OSError, ValueError):
        raise SystemExit("FAIL: docs/recipes.md has no %s" % marker)
    while i < len(lines) and not lines[i].strip():
        i += 1
    cmd = ""
    while i < len(lines) and lines[i].startswith("    "):
        line = lines[i].strip()
        cmd += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            break
        i += 1
    if not cmd:
        raise SystemExit("FAIL: no command after %s" % marker)
    return cmd.replace(SOCKET, "%(socket)s")


def client_head(cmd):
    """A client line up to its decoder, without gst-launch-1.0."""
    if not cmd.startswith("gst-launch-1.0 ") or \
            " ! %s " % DECODER not in cmd:
        raise SystemExit("FAIL: %r: not gst-launch-1.0 ... ! %s" %
                         (cmd, DECODER))
    return cmd[len("gst-launch-1.0 "):cmd.index(" ! %s " % DECODER)]


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def have(element):
    return subprocess.run(["gst-inspect-1.0", element],
                          capture_output=True).returncode == 0


def free_port(kind=socket.SOCK_DGRAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_bound(port):
    """Whether a UDP socket of this machine is bound to @port (the SRT
    listener is up)."""
    for name in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    local = line.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


class Client:
    """A receiving pipeline ending in an appsink of GRAY8 frames, read in a
    thread of its own: the numbers of the frames it decoded, in order."""

    def __init__(self, Gst, head, decoder, name):
        self.name = name
        self.numbers = []
        self.arrived = []
        self.bad = 0
        self.error = None
        self.pipeline = Gst.parse_launch(
            "%s ! h264parse ! %s ! videoconvert ! "
            "video/x-raw,format=GRAY8,width=%d,height=%d ! "
            "appsink name=out sync=false max-buffers=0 drop=false" %
            (head, decoder, W, H))
        self.sink = self.pipeline.get_by_name("out")
        self.Gst = Gst
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        if self.pipeline.set_state(self.Gst.State.PLAYING) == \
                self.Gst.StateChangeReturn.FAILURE:
            raise SystemExit("%s: the client pipeline does not start" %
                             self.name)
        self.thread.start()

    def _run(self):
        Gst = self.Gst
        bus = self.pipeline.get_bus()
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            msg = bus.pop_filtered(Gst.MessageType.ERROR)
            if msg:
                self.error = msg.parse_error()[0].message
                return
            sample = self.sink.emit("try-pull-sample", 100 * Gst.MSECOND)
            if sample is None:
                if self.sink.get_property("eos"):
                    return
                continue
            buf = sample.get_buffer()
            ok, info = buf.map(Gst.MapFlags.READ)
            try:
                stride = W + 3 & ~3
                n = read_stamp(info.data, stride)
            finally:
                buf.unmap(info)
            if n is None:
                self.bad += 1
            else:
                self.numbers.append(n)
                self.arrived.append(time.monotonic())
            if n is not None and n >= FRAMES - 1:
                return

    def stop(self):
        self.thread.join(TIMEOUT + 10)
        self.pipeline.set_state(self.Gst.State.NULL)

    def latency(self, start):
        """Milliseconds from publishing (frame i at @start + i / FPS) to
        the decoded frame here: median and largest."""
        ms = sorted((t - start - n / FPS) * 1000
                    for n, t in zip(self.numbers, self.arrived))
        return (ms[len(ms) // 2], ms[-1]) if ms else (0, 0)

    def check(self, first_at_most):
        """Problems: frames missing between its first and the last one,
        a first frame later than @first_at_most."""
        out = []
        got = [n for n in self.numbers if n < FRAMES]
        if self.error:
            out.append("%s: %s" % (self.name, self.error))
        if self.bad:
            out.append("%s: %d frames decoded wrong" % (self.name, self.bad))
        if not got:
            return out + ["%s: no frame" % self.name]
        want = list(range(got[0], FRAMES))
        if got != want:
            missing = sorted(set(want) - set(got))
            out.append("%s: frames %d..%d: %d missing (%s), %d received" %
                       (self.name, got[0], FRAMES - 1, len(missing),
                        missing[:10], len(got)))
        if got[0] > first_at_most:
            out.append("%s: first frame %d, later than %d" %
                       (self.name, got[0], first_at_most))
        print("%s: frames %d..%d, %d decoded" % (self.name, got[0], got[-1],
                                                 len(got)))
        return out


def spawn(argv, log, out=None):
    return subprocess.Popen(argv, stdout=out or log, stderr=log, text=True)


def launch(cmd, **values):
    """A gst-launch-1.0 server line as argv, its values filled in."""
    return shlex.split(cmd % dict(values))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "producer":
        producer(sys.argv[2], int(sys.argv[3]))
        return 0
    mode = sys.argv[1]
    for element in COMMON + NEEDS[mode]:
        if not have(element):
            skip("no %s in this GStreamer" % element)
    decoder = next((d for d in DECODERS if have(d)), None)
    if decoder is None:
        skip("no H.264 decoder (%s) in this GStreamer" % ", ".join(DECODERS))
    if mode == "rtsp":
        probe = subprocess.run(
            [sys.executable, "-c", "import gi; gi.require_version("
             "'GstRtspServer', '1.0')"], capture_output=True)
        if probe.returncode != 0:
            skip("no GstRtspServer for Python (gir1.2-gst-rtsp-server-1.0)")
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)

    tmp = tempfile.TemporaryDirectory()
    sock = "@cudaipc-recipe-%s-%d" % (mode, os.getpid())
    server_line = recipe(mode + " server")
    client_line = recipe(mode + " client")
    key_int = int(re.search(r"(?:key-int-max=|--key-int )(\d+)",
                            server_line).group(1))
    head = client_head(client_line)
    log = open(os.path.join(tmp.name, "log"), "w+")
    procs, clients, problems = [], [], []
    at = 0
    try:
        prod = spawn([sys.executable, __file__, "producer", sock,
                      str(FRAMES)], log, subprocess.PIPE)
        procs.append(prod)
        if mode == "rtp":
            # the receiver first, on a port of its choice, read back
            c = Client(Gst, re.sub(r"^udpsrc port=\d+",
                                   "udpsrc port=0 address=127.0.0.1 name=rx",
                                   head), decoder, "rtp client")
            c.pipeline.set_state(Gst.State.READY)
            port = c.pipeline.get_by_name("rx").get_property("port")
            c.start()
            clients.append(c)
            server_line = re.sub(r"udpsink host=\S+ port=\d+",
                                 "udpsink host=127.0.0.1 port=%d" % port,
                                 server_line)
            procs.append(spawn(launch(server_line, socket=sock), log))
        elif mode == "srt":
            for attempt in range(5):
                port = free_port()
                server = spawn(launch(re.sub(
                    r"srt://:\d+", "srt://127.0.0.1:%d" % port,
                    server_line), socket=sock), log)
                deadline = time.monotonic() + 20
                while not udp_bound(port) and server.poll() is None \
                        and time.monotonic() < deadline:
                    time.sleep(0.05)
                if udp_bound(port) and server.poll() is None:
                    break
                server.kill()
                server.wait()
            else:
                raise SystemExit("the SRT listener does not start")
            procs.append(server)
            c = Client(Gst, re.sub(r"srt://SERVER:\d+",
                                   "srt://127.0.0.1:%d" % port, head),
                       decoder, "srt client")
            c.start()
            clients.append(c)
        else:
            argv = launch(server_line, socket=sock)
            if argv[:2] != ["python3", "docs/examples/python/rtsp-serve.py"]:
                raise SystemExit("FAIL: %r: not rtsp-serve.py" % server_line)
            # the last of an option given twice counts
            argv = [sys.executable, os.path.join(SOURCE, argv[1])] + \
                argv[2:] + ["--port", "0", "--address", "127.0.0.1",
                            "--encoder", "x264"]
            server = spawn(argv, log, subprocess.PIPE)
            procs.append(server)
            url = server.stdout.readline().strip()
            if not url.startswith("rtsp://"):
                raise SystemExit("rtsp-serve.py printed no address")
            head = re.sub(r"location=\S+", "location=" + url, head)
            first = Client(Gst, head, decoder, "rtsp client 1")
            first.start()
            clients.append(first)
            # the second joins half-way, while the first is at frame `at`
            deadline = time.monotonic() + TIMEOUT
            while (not first.numbers or first.numbers[-1] < FRAMES // 2) \
                    and first.thread.is_alive() \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
            at = first.numbers[-1] if first.numbers else FRAMES
            late = Client(Gst, head, decoder, "rtsp client 2 (joined at "
                          "frame %d)" % at)
            late.start()
            clients.append(late)
        line = prod.stdout.readline().strip()
        start = int(line) / 1e9 if line.isdigit() else None
        for i, c in enumerate(clients):
            c.stop()
            limit = 0 if i == 0 else at + key_int + FPS
            problems += c.check(limit)
            if start is not None and c.numbers:
                print("%s: latency from publishing to decoded: median %.0f "
                      "ms, most %.0f ms" % ((c.name,) + c.latency(start)))
        if prod.wait(30) != 0:
            problems.append("the producer failed")
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.seek(0)
        text = log.read()
        log.close()
        tmp.cleanup()
    for p in problems:
        print("FAIL: " + p)
    if problems and text:
        print("--- the other processes said:\n" + text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
