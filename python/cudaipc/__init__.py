# SPDX-License-Identifier: LGPL-2.1-or-later
"""Video frames shared between processes, in GPU memory, for Python.

Read the frames a GStreamer ``cuipcsink`` publishes, with no copy::

    import cudaipc, torch

    with cudaipc.Consumer("/tmp/cam0.sock") as cams:
        for frame in cams:
            with frame:
                y = torch.from_dlpack(frame.planes[0])   # (height, width)
                print(frame.number, y.float().mean().item())

A frame is the producer's slot itself: on the cuda backend a device
pointer (``__dlpack__``, ``__cuda_array_interface__``), on the host backend
host memory (``__array_interface__``, so ``numpy.asarray(frame)``). It is
complete when it is handed out. The slot goes back to the producer when
the frame is closed (``close()``, the end of its ``with`` block, or
garbage collection) and no array made from it is alive any more: an array
never views a released slot. At most ``max_held`` frames are held at once;
the next one raises :class:`TooManyFramesHeld` until one goes back.

Publish frames that ``cuipcsrc`` pipelines read::

    with cudaipc.Producer("/tmp/out.sock", "NV12", 1920, 1080) as out:
        out.publish(tensor)           # CUDA tensor or array, or host memory

Errors are exceptions with the words of the GStreamer elements' errors:
:class:`NoProducer`, :class:`Refused`, :class:`ProducerLost`,
:class:`FrameTimeout`, :class:`TooManyFramesHeld`.
"""

import ctypes

from . import _dlpack
from ._lib import lib
from . import _lib

__all__ = ["Consumer", "Producer", "Frame", "Plane", "Region", "Object",
           "Error",
           "NoProducer", "Refused", "ProducerLost", "FrameTimeout",
           "TooManyFramesHeld", "Cancelled", "EndOfStream"]

_NONE = (1 << 64) - 1


class Error(RuntimeError):
    """A failure of the library; ``status`` is its cudaipc_status."""

    def __init__(self, message, status=_lib.STATUS_FAILED):
        super().__init__(message)
        self.status = status


class NoProducer(Error):
    """Nobody listens on the socket (within the connect time-out)."""


class Refused(Error):
    """The producer refused this consumer (access, version, device)."""


class ProducerLost(Error):
    """The producer went away, and reconnecting is off."""


class FrameTimeout(Error, TimeoutError):
    """No frame within the time-out."""


class TooManyFramesHeld(Error):
    """max_held frames (or arrays made from them) are held."""


class Cancelled(Error):
    """Consumer.cancel() ended the wait."""


class EndOfStream(Error):
    """The producer ended its stream."""


_ERRORS = {
    _lib.STATUS_TIMEOUT: FrameTimeout,
    _lib.STATUS_EOS: EndOfStream,
    _lib.STATUS_NO_PRODUCER: NoProducer,
    _lib.STATUS_REFUSED: Refused,
    _lib.STATUS_PRODUCER_LOST: ProducerLost,
    _lib.STATUS_TOO_MANY_HELD: TooManyFramesHeld,
    _lib.STATUS_CANCELLED: Cancelled,
}


def _raise(status, text):
    raise _ERRORS.get(status, Error)(text, status)


def _ms(seconds):
    if seconds is None:
        return 0
    return max(1, int(seconds * 1000))


# Plane layouts: (element type, element size, [(row divisor, column
# divisor, components)] per plane)
_U8, _U16 = ("|u1", 1), ("<u2", 2)
_FORMATS = {
    "GRAY8": (_U8, [(1, 1, 1)]),
    "GRAY16_LE": (_U16, [(1, 1, 1)]),
    "NV12": (_U8, [(1, 1, 1), (2, 2, 2)]),
    "NV21": (_U8, [(1, 1, 1), (2, 2, 2)]),
    "P010_10LE": (_U16, [(1, 1, 1), (2, 2, 2)]),
    "P016_LE": (_U16, [(1, 1, 1), (2, 2, 2)]),
    "I420": (_U8, [(1, 1, 1), (2, 2, 1), (2, 2, 1)]),
    "YV12": (_U8, [(1, 1, 1), (2, 2, 1), (2, 2, 1)]),
    "Y444": (_U8, [(1, 1, 1), (1, 1, 1), (1, 1, 1)]),
    "RGB": (_U8, [(1, 1, 3)]),
    "BGR": (_U8, [(1, 1, 3)]),
}
for _f in ("RGBA", "BGRA", "ARGB", "ABGR", "RGBx", "BGRx", "xRGB", "xBGR"):
    _FORMATS[_f] = (_U8, [(1, 1, 4)])


class _Closing:
    """with-blocks that close(), and close() at garbage collection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()



class _Exporter:
    """What arrays of a frame, or of one of its planes, are made from."""

    def _view(self):
        raise NotImplementedError

    @property
    def __array_interface__(self):
        owner, data, shape, strides, typestr, _ = self._view()
        if owner._backend != _lib.BACKEND_HOST:
            raise AttributeError("a frame of the cuda backend is in GPU "
                                 "memory: use __cuda_array_interface__ or "
                                 "__dlpack__")
        owner._exported = True
        return {"shape": shape, "typestr": typestr, "data": (data, True),
                "strides": strides, "version": 3}

    @property
    def __cuda_array_interface__(self):
        owner, data, shape, strides, typestr, _ = self._view()
        if owner._backend != _lib.BACKEND_CUDA:
            raise AttributeError("a frame of the host backend is in host "
                                 "memory: use __array_interface__")
        owner._exported = True
        # complete when handed out: nothing to wait for
        return {"shape": shape, "typestr": typestr, "data": (data, True),
                "strides": strides, "version": 3, "stream": None}

    def __dlpack_device__(self):
        owner = self._view()[0]
        if owner._backend == _lib.BACKEND_CUDA:
            return (_dlpack.KDL_CUDA, owner.device_id)
        return (_dlpack.KDL_CPU, 0)

    def __dlpack__(self, stream=None, **kwargs):
        owner, data, shape, strides, typestr, itemsize = self._view()
        owner._exported = True
        device_type, device_id = self.__dlpack_device__()
        return _dlpack.capsule(owner, data, shape,
                               tuple(s // itemsize for s in strides),
                               device_type, device_id)


class Plane(_Exporter):
    """Plane @index of a frame: (rows, columns[, components]) elements."""

    def __init__(self, frame, index):
        self._frame = frame
        self.index = index

    def _view(self):
        f = self._frame
        f._check_open()
        (typestr, size), planes = _FORMATS[f.format]
        rdiv, cdiv, comps = planes[self.index]
        rows = (f.height + rdiv - 1) // rdiv
        cols = (f.width + cdiv - 1) // cdiv
        stride = f.plane_strides[self.index]
        if comps == 1:
            shape, strides = (rows, cols), (stride, size)
        else:
            shape, strides = (rows, cols, comps), (stride, comps * size,
                                                   size)
        return (f, f.data_ptr + f.plane_offsets[self.index], shape, strides,
                typestr, size)

    @property
    def shape(self):
        return self._view()[2]

    def __repr__(self):
        return "<cudaipc.Plane %d of frame %d: %s>" % (
            self.index, self._frame.number, self.shape)


class Region:
    """A region of interest (GstVideoRegionOfInterestMeta): read from a
    frame, or made to publish with one. @confidence (0..1, or None) travels
    as the "confidence" field of a "detection" parameter."""

    __slots__ = ("type", "id", "parent_id", "x", "y", "w", "h",
                 "confidence")

    def __init__(self, type="", x=0, y=0, w=0, h=0, *, id=0, parent_id=0,
                 confidence=None):
        self.type = type
        self.id, self.parent_id = id, parent_id
        self.x, self.y, self.w, self.h = x, y, w, h
        self.confidence = confidence

    @classmethod
    def _from_c(cls, r):
        return cls(r.type.decode(), r.x, r.y, r.w, r.h, id=r.id,
                   parent_id=r.parent_id,
                   confidence=None if r.confidence < 0 else r.confidence)

    def _to_c(self, out):
        out.type = _fixed(self.type, "a region's type")
        out.id, out.parent_id = self.id, self.parent_id
        out.x, out.y, out.w, out.h = self.x, self.y, self.w, self.h
        out.confidence = -1.0 if self.confidence is None else \
            float(self.confidence)

    def __repr__(self):
        return "<cudaipc.Region %s %d at %d,%d %dx%d>" % (
            self.type, self.id, self.x, self.y, self.w, self.h)


class Object:
    """An object detection of GStreamer's analytics metas
    (GstAnalyticsODMtd, GStreamer >= 1.24): read from a frame, or made to
    publish with one. @rotation (radians, clockwise) travels on GStreamer
    >= 1.26; @track_id (or None) is the id of a tracking entry the
    detection relates to; @id is its id in the frame's relation meta (set
    by the library)."""

    __slots__ = ("label", "x", "y", "w", "h", "confidence", "rotation",
                 "track_id", "id")

    def __init__(self, label="", x=0, y=0, w=0, h=0, confidence=0.0, *,
                 rotation=0.0, track_id=None):
        self.label = label
        self.x, self.y, self.w, self.h = x, y, w, h
        self.confidence, self.rotation = confidence, rotation
        self.track_id = track_id
        self.id = None

    @classmethod
    def _from_c(cls, o):
        obj = cls(o.label.decode(), o.x, o.y, o.w, o.h, o.confidence,
                  rotation=o.rotation,
                  track_id=None if o.track_id < 0 else o.track_id)
        obj.id = o.id
        return obj

    def _to_c(self, out):
        out.label = _fixed(self.label, "an object's label")
        out.x, out.y, out.w, out.h = self.x, self.y, self.w, self.h
        out.confidence = float(self.confidence)
        out.rotation = float(self.rotation)
        out.track_id = -1 if self.track_id is None else int(self.track_id)

    def __repr__(self):
        return "<cudaipc.Object %s %.2f at %d,%d %dx%d>" % (
            self.label, self.confidence, self.x, self.y, self.w, self.h)


def _fixed(text, what):
    """@text as the bytes of a char[64] of the C API."""
    b = text.encode()
    if len(b) >= 64 or b"\0" in b:
        raise ValueError("%s must be under 64 bytes, without NUL: %r" %
                         (what, text))
    return b


class Frame(_Exporter):
    """One frame: the producer's slot, read-only, held until released."""

    def __init__(self, ptr):
        self._ptr = ptr
        self._exported = False
        self._closed = False
        info = _lib.FrameInfo()
        info.struct_size = ctypes.sizeof(info)
        st = lib.cudaipc_frame_get_info(ptr, ctypes.byref(info))
        if st != _lib.STATUS_OK:
            lib.cudaipc_frame_release(ptr)
            self._ptr = None
            raise Error("cannot read the frame's description", st)
        self._backend = info.backend
        self.backend = "cuda" if info.backend == _lib.BACKEND_CUDA else \
            "host"
        self.device_id = info.device_id
        self.width, self.height = info.width, info.height
        self.format = info.format.decode()
        self.caps = info.caps.decode()
        n = info.n_planes
        self.plane_offsets = tuple(info.plane_offset[:n])
        self.plane_strides = tuple(info.plane_stride[:n])
        self.size = info.size
        self.data_ptr = info.data
        self.number = info.number
        self.offset = info.offset
        self.pts = None if info.pts == _NONE else info.pts
        self.duration = None if info.duration == _NONE else info.duration
        self.capture_time = None if info.capture_time == _NONE else \
            info.capture_time
        self.publish_time = info.publish_time
        self._n_regions = info.n_regions
        self._n_objects = info.n_objects
        self.flags = info.flags
        self._regions = None
        self._objects = None

    def _check_open(self):
        if self._ptr is None or self._closed:
            raise ValueError("frame %d is closed" % self.number)

    def _view(self):
        self._check_open()
        return (self, self.data_ptr, (self.size,), (1,), "|u1", 1)

    @property
    def marker(self):
        """The producer's buffer had GST_BUFFER_FLAG_MARKER."""
        return bool(self.flags & (1 << 9))

    @property
    def planes(self):
        """The frame's planes as arrays' sources (NV12: Y, then UV)."""
        self._check_open()
        if self.format not in _FORMATS:
            raise NotImplementedError("planes of %s frames (the whole frame "
                                      "is there as bytes)" % self.format)
        return [Plane(self, i) for i in range(len(self.plane_offsets))]

    @property
    def regions(self):
        """The regions of interest the producer put on the frame."""
        if self._regions is None:
            self._check_open()
            out = []
            for i in range(self._n_regions):
                r = _lib.Region()
                if lib.cudaipc_frame_get_region(self._ptr, i,
                                                ctypes.byref(r)) == 0:
                    out.append(Region._from_c(r))
            self._regions = out
        return self._regions

    @property
    def objects(self):
        """The object detections the producer put on the frame (empty
        where the library was built without gstreamer-analytics)."""
        if self._objects is None:
            self._check_open()
            out = []
            for i in range(self._n_objects):
                o = _lib.Object()
                if lib.cudaipc_frame_get_object(self._ptr, i,
                                                ctypes.byref(o)) == 0:
                    out.append(Object._from_c(o))
            self._objects = out
        return self._objects

    def tobytes(self):
        """A copy of the frame's bytes (host backend)."""
        self._check_open()
        if self._backend != _lib.BACKEND_HOST:
            raise ValueError("tobytes() of a frame in GPU memory: copy it "
                             "with torch or cupy")
        return ctypes.string_at(self.data_ptr, self.size)

    def close(self):
        """Lets the slot go, once no array made from the frame is left."""
        if self._closed:
            return
        self._closed = True
        if not self._exported:
            self._release()

    def _release(self):
        if self._ptr is not None:
            lib.cudaipc_frame_release(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # the last reference: no array of it is left
        self._release()

    def __repr__(self):
        return "<cudaipc.Frame %d %s %dx%d %s%s>" % (
            self.number, self.format, self.width, self.height, self.backend,
            " closed" if self._closed else "")


class Consumer(_Closing):
    """Reads the frames of the producer on @socket_path.

    Connects on the first frame, waiting up to @connect_timeout seconds
    for a producer, and again after one went away while @reconnect.
    @timeout bounds each wait for a frame (None: as long as it takes).
    Frames that arrive while the program is busy and @max_held are held go
    back to the producer (dropped here), unless @keep_all: then a slow
    consumer holds the producer back (with its on-full=wait).
    """

    def __init__(self, socket_path, *, name=None, device_id=0,
                 connect_timeout=5.0, reconnect=True, reconnect_timeout=None,
                 max_held=2, peer_access=True, keep_all=False,
                 timeout=None):
        o = _lib.ConsumerOptions()
        lib.cudaipc_consumer_options_init(ctypes.byref(o))
        self._name = name.encode() if name else None
        o.name = self._name
        o.device_id = device_id
        o.connect_timeout_ms = _ms(connect_timeout)
        o.reconnect = 1 if reconnect else 0
        o.reconnect_timeout_ms = _ms(reconnect_timeout)
        o.max_held = max_held
        o.peer_access = 1 if peer_access else 0
        o.keep_all = 1 if keep_all else 0
        self.socket_path = socket_path
        self.timeout = timeout
        self.max_held = max_held
        self._c = lib.cudaipc_consumer_new(socket_path.encode(),
                                           ctypes.byref(o))
        if not self._c:
            raise Error("cannot make a consumer of %s" % socket_path)

    def next_frame(self, timeout=None):
        """The next frame; raises EndOfStream at the producer's end."""
        if not self._c:
            raise ValueError("the consumer is closed")
        ptr = ctypes.c_void_p()
        st = lib.cudaipc_consumer_next(self._c, _ms(timeout),
                                       ctypes.byref(ptr))
        if st != _lib.STATUS_OK:
            _raise(st, lib.cudaipc_consumer_error(self._c).decode())
        return Frame(ptr.value)

    def __iter__(self):
        while True:
            try:
                frame = self.next_frame(self.timeout)
            except EndOfStream:
                return
            yield frame

    @property
    def held(self):
        """Frames held now (those closed whose arrays live included)."""
        return lib.cudaipc_consumer_held(self._c) if self._c else 0

    def cancel(self):
        """Makes a waiting next_frame() raise Cancelled (any thread)."""
        if self._c:
            lib.cudaipc_consumer_cancel(self._c)

    def close(self):
        if self._c:
            lib.cudaipc_consumer_free(self._c)
            self._c = None



def _memory_of(obj):
    """(pointer, bytes, on the GPU) of a C-contiguous array or buffer."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_interface(cai, True)
    if hasattr(obj, "is_cuda") and hasattr(obj, "numpy"):
        # a torch tensor in host memory
        return _memory_of(obj.contiguous().numpy())
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        return _from_interface(ai, False)
    view = memoryview(obj)
    if not view.c_contiguous:
        raise ValueError("the frame's memory must be contiguous")
    if view.readonly:
        buf = ctypes.c_char_p(bytes(view))
        return ctypes.cast(buf, ctypes.c_void_p).value, view.nbytes, False, \
            buf
    arr = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(arr), view.nbytes, False, arr


def _from_interface(ai, on_device):
    shape = ai["shape"]
    itemsize = int(ai["typestr"][2:])
    n = itemsize
    for s in shape:
        n *= s
    strides = ai.get("strides")
    if strides is not None:
        want, expect = itemsize, []
        for s in reversed(shape):
            expect.insert(0, want)
            want *= s
        if tuple(strides) != tuple(expect):
            raise ValueError("the frame's memory must be C-contiguous")
    return ai["data"][0], n, on_device, None


class Producer(_Closing):
    """Publishes frames on @socket_path, which cuipcsrc pipelines read.

    @fmt, @width, @height and @fps make the caps (raw video; memory laid out
    as GStreamer lays out @fmt); @backend is "cuda" (frames in GPU memory
    on @device_id) or "host". With on_full="wait" a publish() waits up to
    @full_timeout seconds for a free slot, else the frame is dropped.
    """

    def __init__(self, socket_path, fmt, width, height, fps=30, *,
                 backend="cuda", device_id=0, ring_size=4, on_full="wait",
                 full_timeout=1.0, name=None, socket_mode=0o660):
        o = _lib.ProducerOptions()
        lib.cudaipc_producer_options_init(ctypes.byref(o))
        self._name = name.encode() if name else None
        o.name = self._name
        o.backend = _lib.BACKEND_CUDA if backend == "cuda" else \
            _lib.BACKEND_HOST
        o.device_id = device_id
        o.ring_size = ring_size
        o.wait_when_full = 1 if on_full == "wait" else 0
        o.full_timeout_ms = _ms(full_timeout) if full_timeout else 0
        o.socket_mode = socket_mode
        self.caps = ("video/x-raw, format=(string)%s, width=(int)%d, "
                     "height=(int)%d, framerate=(fraction)%d/1" %
                     (fmt, width, height, fps))
        self._p = lib.cudaipc_producer_new(socket_path.encode(),
                                           self.caps.encode(),
                                           ctypes.byref(o))
        if not self._p:
            raise Error(lib.cudaipc_producer_last_error().decode())

    def publish(self, frame, pts=None, timeout=None, *, regions=(),
                objects=()):
        """Copies @frame (an array, a tensor or a buffer) into a slot and
        publishes it, with @regions (:class:`Region`) and @objects
        (:class:`Object`) on it as GStreamer metas. Returns False when the
        ring was full and it was dropped."""
        ptr, size, on_device, keep = _memory_of(frame)
        pts = _NONE if pts is None else pts
        if regions or objects:
            rs = (_lib.Region * max(len(regions), 1))()
            os_ = (_lib.Object * max(len(objects), 1))()
            for r, c in zip(regions, rs):
                r._to_c(c)
            for o, c in zip(objects, os_):
                o._to_c(c)
            st = lib.cudaipc_producer_publish_annotated(
                self._p, ptr, size, 1 if on_device else 0, pts,
                _ms(timeout), rs, len(regions), os_, len(objects))
        else:
            st = lib.cudaipc_producer_publish(self._p, ptr, size,
                                              1 if on_device else 0, pts,
                                              _ms(timeout))
        del keep
        if st == _lib.STATUS_TIMEOUT:
            return False
        if st != _lib.STATUS_OK:
            _raise(st, lib.cudaipc_producer_error(self._p).decode())
        return True

    @property
    def consumers(self):
        return lib.cudaipc_producer_n_consumers(self._p)

    @property
    def counts(self):
        """(published, dropped) since it started."""
        pub, drop = ctypes.c_uint64(), ctypes.c_uint64()
        lib.cudaipc_producer_counts(self._p, ctypes.byref(pub),
                                    ctypes.byref(drop))
        return pub.value, drop.value

    def end(self):
        """Ends the stream: consumers get EOS."""
        st = lib.cudaipc_producer_end(self._p)
        if st != _lib.STATUS_OK:
            _raise(st, lib.cudaipc_producer_error(self._p).decode())

    def close(self):
        if self._p:
            lib.cudaipc_producer_free(self._p)
            self._p = None

