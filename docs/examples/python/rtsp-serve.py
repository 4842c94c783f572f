#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Serves the frames of a cuipcsink to other hosts over RTSP
(gst-rtsp-server through PyGObject: python3-gi, gir1.2-gst-rtsp-server-1.0).
One encoder for every client (shared media; --per-client: one each): the
pipeline starts with the first client and stops after the last.

    python3 rtsp-serve.py /tmp/cam0.sock [--port 8554] [--mount /cam] \\
        [--encoder auto] [--key-int 30] [--bitrate 2000]

It prints the address once it listens (--port 0: a free port); any RTSP
client then plays it, e.g. on another host:

    gst-launch-1.0 rtspsrc location=rtsp://HOST:8554/cam latency=100 ! \\
        rtph264depay ! h264parse ! avdec_h264 ! videoconvert ! autovideosink

--encoder: nv (NVENC: nvautogpuh264enc, else nvh264enc, fed the CUDA
memory of a cuda-backend producer with no download), x264 (on the CPU), or
auto (nv where GStreamer has it, else x264). A client that joins late
starts at the next key frame: --key-int frames apart at most (docs/recipes.md).
"""
import argparse
import signal
import sys


def encoder(Gst, kind, key_int, kbps):
    """The part of the launch line from raw video to H.264."""
    if kind in ("auto", "nv"):
        for name in ("nvautogpuh264enc", "nvh264enc"):
            if Gst.ElementFactory.find(name):
                # takes the source's CUDA memory as it is, system memory
                # too; no B-frames by default, so no reordering delay (the
                # two properties here are the ones every version has)
                return "%s gop-size=%d bitrate=%d" % (name, key_int, kbps)
        if kind == "nv":
            sys.exit("no NVENC encoder (nvautogpuh264enc, nvh264enc) here")
    # cudadownload first where the producer's frames are in GPU memory
    down = "cudadownload ! " if Gst.ElementFactory.find("cudadownload") \
        else ""
    # 8-bit 4:2:0, which every player decodes (left to choose, x264enc
    # may take a 4:4:4 or 10-bit input)
    return ("%svideoconvert ! video/x-raw,format=NV12 ! x264enc "
            "tune=zerolatency speed-preset=ultrafast key-int-max=%d "
            "bitrate=%d" % (down, key_int, kbps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("socket", help="the producer's socket-path")
    ap.add_argument("--port", type=int, default=8554,
                    help="TCP port (0: a free one; default 8554)")
    ap.add_argument("--address", default="0.0.0.0",
                    help="address to listen on (default: all)")
    ap.add_argument("--mount", default="/cam", help="path (default /cam)")
    ap.add_argument("--encoder", choices=("auto", "nv", "x264"),
                    default="auto")
    ap.add_argument("--key-int", type=int, default=30,
                    help="frames between key frames (default 30)")
    ap.add_argument("--bitrate", type=int, default=2000,
                    help="kbit/s (default 2000)")
    ap.add_argument("--per-client", action="store_true",
                    help="a pipeline, a consumer and an encoder for each "
                    "client instead of one shared by all")
    args = ap.parse_args()

    # after the arguments, so that --help needs no GStreamer
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GLib, Gst, GstRtspServer

    Gst.init(None)
    # h264parse puts SPS and PPS before every key frame, where a client
    # that joins late needs them (rtph264pay config-interval=-1 behind
    # x264enc's sliced threads left OpenH264 decoding nothing)
    launch = ("( cuipcsrc socket-path=%s ! %s ! h264parse config-interval=-1 "
              "! rtph264pay name=pay0 pt=96 )" %
              (args.socket, encoder(Gst, args.encoder, args.key_int,
                                    args.bitrate)))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(launch)
    factory.set_shared(not args.per_client)
    server = GstRtspServer.RTSPServer()
    server.set_address(args.address)
    server.set_service(str(args.port))
    server.get_mount_points().add_factory(args.mount, factory)
    if not server.attach(None):
        sys.exit("cannot listen on %s:%d" % (args.address, args.port))
    host = "127.0.0.1" if args.address == "0.0.0.0" else args.address
    print("rtsp://%s:%d%s" % (host, server.get_bound_port(), args.mount),
          flush=True)
    print("serving: " + launch, file=sys.stderr, flush=True)

    loop = GLib.MainLoop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
