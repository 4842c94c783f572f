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
garbage collection) and no array made from it is alive any more: at once,
or when the last such array goes. The arrays (NumPy's, DLPack's) hold the
slot, not the frame: a closed frame the program keeps holds nothing, and
an array never views a released slot. At most ``max_held`` frames are
held at once; the next one raises :class:`TooManyFramesHeld` until one
goes back.

Publish frames that ``cuipcsrc`` pipelines read::

    with cudaipc.Producer("/tmp/out.sock", "NV12", 1920, 1080) as out:
        out.publish(tensor)           # CUDA tensor or array, or host memory

Errors are exceptions with the words of the GStreamer elements' errors:
:class:`NoProducer`, :class:`Refused`, :class:`ProducerLost`,
:class:`FrameTimeout`, :class:`TooManyFramesHeld`.

Any thread may use any object. A consumer's ``next_frame()`` calls take
turns, and so do a producer's ``publish()`` and ``end()``; the rest run
at once. ``close()`` cancels a call in flight in another thread (it
raises :class:`Cancelled`), waits for it, then frees; a closed consumer
or producer raises ``ValueError``. A frame may be read by several threads
and closed by any.
"""

# Every module-level name that is not public API starts with "_", so that
# dir(cudaipc) and help(cudaipc) show the API alone (__all__).
import ctypes as _ctypes
import operator as _operator
import os as _os
import struct as _struct
import threading as _threading
import warnings as _warnings

from . import _dlpack
from ._dlpack import (to_dlpack as _to_dlpack, new_capsule as _new_capsule,
                      NAME as _CAPSULE_NAME, DESTRUCTOR as _CAPSULE_DESTRUCTOR)
from ._lib import lib as _clib
from . import _lib

try:
    # written by meson (python/cudaipc/_config.py.in): the project's version
    from ._config import VERSION as __version__
except ImportError:
    # python/ of a source tree, not a build: no version to tell
    __version__ = "0+unknown"

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
    """Consumer.cancel(), or a close() in another thread, ended the wait
    (of next_frame(), or of publish() for a free slot)."""


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


def _text(raw):
    """Text that came from a peer or the library (a producer's region
    types, labels, caps, names; the library's error texts, which quote
    paths and what a producer said): bytes that need not be UTF-8, nor
    end on a whole character where a fixed field cut them. Decoded with
    U+FFFD for what is not UTF-8: never an exception."""
    return raw.decode("utf-8", "replace") if raw else ""


def _name(name):
    """A name for the library: None, or @name as UTF-8 bytes."""
    if name is None or name == "":
        return None
    if not isinstance(name, str):
        raise TypeError("a name is a str, not %r" % (name,))
    return name.encode()


def _path(path):
    """A socket path for the library (str, bytes or a path object)."""
    path = _os.fsencode(path)
    if not path:
        raise ValueError("a socket path is needed")
    return path


def _ms(seconds):
    if seconds is None:
        return 0
    return max(1, int(seconds * 1000))


class _Closing:
    """with-blocks that close(), and close() at garbage collection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class _Handle(_Closing):
    """A libcudaipc object that threads share. Each call on it runs
    between _enter() and _leave(); close() refuses new calls, ends the
    waits of those in flight (_interrupt(), the library's cancel), waits
    until they returned, and only then frees the object: no thread ever
    calls with a freed pointer. The library serialises next() and
    publish() itself; _turn serialises them here too, so that each call's
    error text is read before another thread's call replaces it.

    A signal handler runs in the main thread between two of its
    bytecodes, maybe in the middle of a call on the object: its cancel()
    or close() must not wait for that call. So _state's lock is
    reentrant, and a close() in a thread that is itself in a call leaves
    the freeing to that call's _leave().

    The class attributes are what an object whose __init__ failed early
    has: close() and __del__ find nothing to do."""

    _ptr = None         # the library's object; None: closed or never made
    _state = None       # a Condition over _ptr, _users and _closing
    _mutex = None       # _state's lock
    _users = None       # calls in flight: how many in each thread
    _turn = None        # one next() or publish() at a time
    _closing = False
    _what = "object"

    def _init_handle(self):
        # the calls below take the lock itself: the Condition's own
        # __enter__ and __exit__ are Python functions, a cost each call
        self._mutex = _threading.RLock()
        self._state = _threading.Condition(self._mutex)
        self._users = {}
        self._turn = _threading.Lock()

    def _enter(self):
        """The library's object, for a call that _leave() ends."""
        mutex = self._mutex
        if mutex is None:
            raise ValueError("the %s is closed" % self._what)
        me = _threading.get_ident()
        with mutex:
            if self._ptr is None or self._closing:
                raise ValueError("the %s is closed" % self._what)
            self._users[me] = self._users.get(me, 0) + 1
            # read once counted: a close() in between (a signal
            # handler's) freed it, else it waits for this call
            ptr = self._ptr
            if ptr is None:
                self._leave()
                raise ValueError("the %s is closed" % self._what)
            return ptr

    def _leave(self):
        me = _threading.get_ident()
        with self._mutex:
            n = self._users[me] - 1
            if n:
                self._users[me] = n
            else:
                del self._users[me]
            if not self._users and self._closing:
                self._free_now()

    def _quick(self, call, default):
        """@call(the object), for a call that never waits; @default once
        closed."""
        mutex = self._mutex
        if mutex is None:
            return default
        with mutex:
            if self._ptr is None or self._closing:
                return default
            return call(self._ptr)

    def _interrupt(self, ptr):
        raise NotImplementedError

    def _free(self, ptr):
        raise NotImplementedError

    def _free_now(self):
        """Under _state, no call in flight."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._free(ptr)
            self._state.notify_all()

    def close(self):
        """Frees the library's object: a call in flight in another thread
        is cancelled first (it raises Cancelled), and waited for. Any
        thread, a signal handler's too; again is fine."""
        state = self._state
        if state is None:
            return
        with state:
            if self._ptr is None:
                return
            if not self._closing:
                self._closing = True
                self._interrupt(self._ptr)
            if not self._users:
                self._free_now()
            elif _threading.get_ident() not in self._users:
                state.wait_for(lambda: self._ptr is None)
            # else this thread is in a call on the object (close() from a
            # signal handler): that call frees it as it returns


def _keeper(ptr):
    """A reference to frame @ptr in the library, as a capsule: the
    library's destructor drops it when the capsule goes (an unconsumed
    DLPack tensor of the frame's bytes), so no Python runs then."""
    t = _to_dlpack(ptr, -1)
    if not t:
        raise Error("cannot take a reference to the frame")
    return _new_capsule(t, _CAPSULE_NAME, _CAPSULE_DESTRUCTOR)


class _Exporter:
    """What arrays of a frame, or of one of its planes, are made from.
    _view() is (frame, data, shape, strides in bytes, typestr), and raises
    once the frame is closed; _dl_source() is (frame, plane index or -1)
    for __dlpack__. Each runs under the frame's lock, which its close()
    takes too: a thread that closes the frame never releases it under
    another that reads it.

    Each kind of array holds the slot, not the Frame: a NumPy array's base
    is the frame's read-only buffer, which holds a reference in the
    library (Frame._host_buffer()); a DLPack tensor holds its own. An
    array made through __cuda_array_interface__ holds the object it was
    made of (cupy, numba, torch keep it), so that object takes a reference
    of its own (_cai) and drops it when it goes."""

    __slots__ = ()

    def _view(self):
        raise NotImplementedError

    @property
    def __array_interface__(self):
        frame = self._dl_source()[0]
        with frame._lock:
            owner, data, shape, strides, typestr = self._view()
            if owner._backend != _lib.BACKEND_HOST:
                raise AttributeError("a frame of the cuda backend is in GPU "
                                     "memory: use __cuda_array_interface__ "
                                     "or __dlpack__")
            buf = owner._host_buffer()
        return {"shape": shape, "typestr": typestr, "data": buf,
                "offset": data - owner.data_ptr, "strides": strides,
                "version": 3}

    @property
    def __cuda_array_interface__(self):
        frame = self._dl_source()[0]
        with frame._lock:
            owner, data, shape, strides, typestr = self._view()
            if owner._backend != _lib.BACKEND_CUDA:
                raise AttributeError("a frame of the host backend is in "
                                     "host memory: use __array_interface__")
            if self._cai is None:
                self._cai = _keeper(owner._ptr)
        # complete when handed out: nothing to wait for
        return {"shape": shape, "typestr": typestr, "data": (data, True),
                "strides": strides, "version": 3, "stream": None}

    def __dlpack_device__(self):
        frame = self._dl_source()[0]
        with frame._lock:
            return self._view()[0]._dl_device

    def to_dlpack(self):
        """A DLPack capsule of the frame's (the plane's) bytes, to hand
        once to a from_dlpack() that takes capsules: the quick way to a
        torch tensor of every frame, torch.from_dlpack(plane.to_dlpack()).
        torch.from_dlpack(plane) first asks torch for its current CUDA
        stream to pass to __dlpack__, which costs more than the rest of
        the tensor together (docs/benchmarks.md, Python consumers); a frame
        is complete when handed out, so there is nothing to order on it.
        The capsule holds the frame as any array of it does."""
        return self.__dlpack__()

    def __dlpack__(self, stream=None, **kwargs):
        # the frame is complete: nothing to order on @stream. The tensor
        # holds the frame in the library, not here (_dlpack.py)
        frame, index = self._dl_source()
        with frame._lock:
            frame._check_open()
            t = _to_dlpack(frame._ptr, index)
        if not t:
            raise NotImplementedError(frame._no_array(index))
        return _new_capsule(t, _CAPSULE_NAME, _CAPSULE_DESTRUCTOR)


class Plane(_Exporter):
    """Plane @index of a frame: (rows, columns[, components]) elements of
    8 or 16 bits, as libcudaipc describes it (cudaipc_frame_get_plane).
    Planes of a format that are no such array (YUY2, v210, tiled) raise
    NotImplementedError when an array is asked of them."""

    __slots__ = ("_frame", "index", "_cai")

    def __init__(self, frame, index):
        self._frame = frame
        self.index = index
        self._cai = None

    def _view(self):
        f = self._frame
        f._check_open()
        return (f,) + f._plane_geometry(self.index)

    def _dl_source(self):
        return self._frame, self.index

    @property
    def shape(self):
        with self._frame._lock:
            return self._view()[2]

    def __repr__(self):
        return "<cudaipc.Plane %d of frame %d>" % (self.index,
                                                    self._frame.number)


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
        return cls(_text(r.type), r.x, r.y, r.w, r.h, id=r.id,
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
        obj = cls(_text(o.label), o.x, o.y, o.w, o.h, o.confidence,
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


def _info_reader():
    """A struct.Struct that reads a FrameInfo in one call, and the index
    of each field in what it returns (arrays: their first element)."""
    word = "Q" if _ctypes.sizeof(_ctypes.c_void_p) == 8 else "I"
    codes = {_ctypes.c_uint32: "I", _ctypes.c_int32: "i",
             _ctypes.c_uint64: "Q", _ctypes.c_size_t: word,
             _ctypes.c_char_p: word}
    fmt, pos, at, where = "=", 0, 0, {}
    for name, ctype in _lib.FrameInfo._fields_:
        field = getattr(_lib.FrameInfo, name)
        if field.offset > pos:
            fmt += "%dx" % (field.offset - pos)
        where[name] = at
        if issubclass(ctype, _ctypes.Array) and ctype._type_ is _ctypes.c_char:
            fmt += "%ds" % ctype._length_
            at += 1
        elif issubclass(ctype, _ctypes.Array):
            fmt += "%d%s" % (ctype._length_, codes[ctype._type_])
            at += ctype._length_
        else:
            fmt += codes[ctype]
            at += 1
        pos = field.offset + field.size
    fmt += "%dx" % (_ctypes.sizeof(_lib.FrameInfo) - pos)
    reader = _struct.Struct(fmt)
    assert reader.size == _ctypes.sizeof(_lib.FrameInfo)
    return reader, where


_INFO, _AT = _info_reader()
_INFO_SIZE = _ctypes.sizeof(_lib.FrameInfo)
# a frame's layout in what _INFO reads: backend..format, then n_planes..size
# (the caps pointer between them is not part of it)
assert _AT["caps"] == _AT["format"] + 1 == _AT["n_planes"] - 1
_LAYOUT_HEAD = slice(_AT["backend"], _AT["format"] + 1)
_LAYOUT_TAIL = slice(_AT["n_planes"], _AT["size"] + 1)
# a layout -> what frames of that layout share (_shape())
_SHAPES = {}
# what differs from frame to frame, in one call (Frame.__init__)
_PER_FRAME = _operator.itemgetter(*(_AT[name] for name in (
    "caps", "data", "number", "offset", "pts", "duration", "capture_time",
    "publish_time", "n_regions", "n_objects", "flags", "dropped_before")))


def _new_info():
    info = _lib.FrameInfo()
    info.struct_size = _INFO_SIZE
    return info


def _shape(v):
    """What frames of one layout (v: what _INFO read of one) share, made
    once a layout: (backend code, backend, device id, DLPack device, width,
    height, format, plane offsets, plane strides, size, and a list of one
    item where Frame._plane_geometry() keeps the planes' layout once it
    asked the library for it)."""
    key = v[_LAYOUT_HEAD] + v[_LAYOUT_TAIL]
    shape = _SHAPES.get(key)
    if shape is None:
        at = _AT
        backend, device_id = v[at["backend"]], v[at["device_id"]]
        if backend == _lib.BACKEND_CUDA:
            name, dl_device = "cuda", (_dlpack.KDL_CUDA, device_id)
        else:
            name, dl_device = "host", (_dlpack.KDL_CPU, 0)
        n = v[at["n_planes"]]
        offsets = v[at["plane_offset"]:at["plane_offset"] + n]
        strides = v[at["plane_stride"]:at["plane_stride"] + n]
        shape = (backend, name, device_id, dl_device, v[at["width"]],
                 v[at["height"]], _text(v[at["format"]].split(b"\0", 1)[0]),
                 offsets, strides, v[at["size"]], [None])
        if len(_SHAPES) >= 64:
            _SHAPES.clear()
        _SHAPES[key] = shape
    return shape


_last_caps = (b"", "")


def _caps_text(ptr):
    """The caps string at @ptr; frames in a row mostly have the same (the
    last one is kept as one tuple: threads may read frames at once)."""
    global _last_caps
    if not ptr:
        return ""
    raw = _ctypes.string_at(ptr)
    last = _last_caps
    if raw == last[0]:
        return last[1]
    text = _text(raw)
    _last_caps = (raw, text)
    return text


class Frame(_Exporter):
    """One frame: the producer's slot, read-only, held until released."""

    __slots__ = ("_lock", "_ptr", "_host", "_cai", "_closed", "_backend",
                 "_dl_device", "_planes", "_layout_box", "_regions",
                 "_objects", "_n_regions", "_n_objects", "backend",
                 "device_id", "width", "height", "format", "caps",
                 "plane_offsets", "plane_strides", "size", "data_ptr",
                 "number", "offset", "pts", "duration", "capture_time",
                 "publish_time", "flags", "dropped_before",
                 "__weakref__",
                 # a program's own attributes on a frame
                 "__dict__")

    def __init__(self, ptr, info=None):
        # reentrant: a signal handler may close the frame in the middle
        # of a read of it in the same thread
        self._lock = _threading.RLock()
        self._ptr = ptr
        self._host = None
        self._cai = None
        self._closed = False
        self._planes = None
        self._regions = None
        self._objects = None
        # @info: the caller's FrameInfo to read the description into
        if info is None:
            info = _new_info()
        st = _clib.cudaipc_frame_get_info(ptr, info)
        if st != _lib.STATUS_OK:
            _clib.cudaipc_frame_release(ptr)
            self._ptr = None
            raise Error("cannot read the frame's description", st)
        # every field in one read of the structure; what the frames of one
        # layout share, made once
        v = _INFO.unpack_from(info)
        (self._backend, self.backend, self.device_id, self._dl_device,
         self.width, self.height, self.format, self.plane_offsets,
         self.plane_strides, self.size, self._layout_box) = _shape(v)
        (caps, self.data_ptr, self.number, self.offset, pts, duration,
         capture_time, self.publish_time, self._n_regions, self._n_objects,
         self.flags, self.dropped_before) = _PER_FRAME(v)
        self.caps = _caps_text(caps)
        self.pts = None if pts == _NONE else pts
        self.duration = None if duration == _NONE else duration
        self.capture_time = None if capture_time == _NONE else capture_time

    def _check_open(self):
        if self._ptr is None or self._closed:
            raise ValueError("frame %d is closed" % self.number)

    def _view(self):
        self._check_open()
        return (self, self.data_ptr, (self.size,), (1,), "|u1")

    @property
    def marker(self):
        """The producer's buffer had GST_BUFFER_FLAG_MARKER."""
        return bool(self.flags & (1 << 9))

    def _dl_source(self):
        return self, -1

    def _host_buffer(self):
        """The frame's bytes as a read-only buffer that holds the frame in
        the library for as long as it lives: what NumPy arrays of the
        frame and its planes are made of (their base). The frame keeps it
        until closed. Under the frame's lock, open."""
        buf = self._host
        if buf is None:
            raw = (_ctypes.c_char * self.size).from_address(self.data_ptr)
            raw.frame = _keeper(self._ptr)
            buf = self._host = memoryview(raw).toreadonly()
        return buf

    def _no_array(self, index):
        return ("plane %d of a %s frame is no array of 8 or 16 bit elements "
                "(the whole frame is there as bytes)" % (index, self.format))

    def _plane_geometry(self, index):
        """Plane @index: (data, shape, strides in bytes, typestr). Frames of
        one layout share it: the library is asked once a layout. Under the
        frame's lock, open."""
        g = self._planes
        if g is None:
            box = self._layout_box
            layout = box[0]
            if layout is None:
                layout = box[0] = self._layout()
            base = self.data_ptr
            g = self._planes = [None if p is None else (base + p[0],) + p[1:]
                                for p in layout]
        v = g[index]
        if v is None:
            raise NotImplementedError(self._no_array(index))
        return v

    def _layout(self):
        """Per plane: its geometry as _plane_geometry() gives it, but for
        an offset from the frame's first byte instead of the data; None
        for a plane that is no array."""
        out = []
        p = _lib.Plane()
        for i in range(len(self.plane_offsets)):
            if (_clib.cudaipc_frame_get_plane(self._ptr, i, p)
                    != _lib.STATUS_OK):
                out.append(None)
                continue
            n, size = p.ndim, p.element_bits // 8
            out.append((p.data - self.data_ptr, tuple(p.shape[:n]),
                        tuple(e * size for e in p.strides[:n]),
                        "|u1" if size == 1 else "<u2"))
        return out

    @property
    def planes(self):
        """The frame's planes as arrays' sources (NV12: Y, then UV)."""
        self._check_open()
        return [Plane(self, i) for i in range(len(self.plane_offsets))]

    @property
    def regions(self):
        """The regions of interest the producer put on the frame."""
        if self._regions is None:
            out = []
            with self._lock:
                self._check_open()
                for i in range(self._n_regions):
                    r = _lib.Region()
                    if _clib.cudaipc_frame_get_region(self._ptr, i,
                                                      _ctypes.byref(r)) == 0:
                        out.append(Region._from_c(r))
            self._regions = out
        return self._regions

    @property
    def objects(self):
        """The object detections the producer put on the frame (empty
        where the library was built without gstreamer-analytics)."""
        if self._objects is None:
            out = []
            with self._lock:
                self._check_open()
                for i in range(self._n_objects):
                    o = _lib.Object()
                    if _clib.cudaipc_frame_get_object(self._ptr, i,
                                                      _ctypes.byref(o)) == 0:
                        out.append(Object._from_c(o))
            self._objects = out
        return self._objects

    def tobytes(self):
        """A copy of the frame's bytes (host backend)."""
        with self._lock:
            self._check_open()
            if self._backend != _lib.BACKEND_HOST:
                raise ValueError("tobytes() of a frame in GPU memory: copy "
                                 "it with torch or cupy")
            return _ctypes.string_at(self.data_ptr, self.size)

    def close(self):
        """Lets the slot go, at once where no array made from the frame is
        alive, else when the last one goes. A closed frame the program
        keeps holds no slot (but one whose __cuda_array_interface__ made
        an array: that array holds the frame itself)."""
        self._closed = True
        self._release()

    def _release(self):
        # the arrays hold references of their own: drop the frame's, once
        # no other thread reads it
        with self._lock:
            self._host = None
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            _clib.cudaipc_frame_release(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self._release()

    def __repr__(self):
        return "<cudaipc.Frame %d %s %dx%d %s%s>" % (
            self.number, self.format, self.width, self.height, self.backend,
            " closed" if self._closed else "")


class Consumer(_Handle):
    """Reads the frames of the producer on @socket_path (str, bytes or a
    path object; "@name" for an abstract socket).

    Connects on the first frame, waiting up to @connect_timeout seconds
    for a producer, and again after one went away while @reconnect (up to
    @reconnect_timeout seconds, then NoProducer: a producer that restarts
    is back sooner); None: as long as it takes. The defaults are
    cuipcsrc's. A connection waits that long whatever the frame's
    time-out: the
    consumer may start before its producer. @timeout bounds each wait for
    a frame in iteration, counted from the connection (None: as long as
    it takes).
    @max_held frames at most are held at once (-1: the producer's ring
    less one). @leaky, as cuipcsrc's leaky-type, says what happens to
    frames that arrive while the program is busy and @max_held are held:
    "auto" keeps every frame of a stream that is not live (a file, a
    decoder: the producer waits for this consumer) and drops the oldest of
    a live one (a camera), with a warning the first time (`dropped` counts
    them, a Frame's `dropped_before` says how many went before it); "none"
    never drops (a slow consumer holds the producer back); "downstream"
    always drops the oldest. @keep_all is leaky="none".
    @announce, as cuipcsrc's: "socket" (a message a frame) or
    "shared-memory" (through a page of shared memory the producer makes
    for this consumer: less CPU a frame), with @spin_us microseconds of
    busy reading before each wait sleeps (0..1000, 0: none).
    """

    _LEAKY = {"auto": _lib.LEAKY_AUTO, "none": _lib.LEAKY_NONE,
              "downstream": _lib.LEAKY_DOWNSTREAM}
    _ANNOUNCE = {"socket": _lib.ANNOUNCE_BY_SOCKET,
                 "shared-memory": _lib.ANNOUNCE_BY_SHARED_MEMORY}

    _what = "consumer"

    def __init__(self, socket_path, *, name=None, device_id=0,
                 connect_timeout=10.0, reconnect=True, reconnect_timeout=30.0,
                 max_held=-1, peer_access=True, keep_all=False,
                 leaky="auto", timeout=None, announce="socket", spin_us=0):
        self._init_handle()
        self._out = _ctypes.c_void_p()
        self._out_ref = _ctypes.byref(self._out)
        self._info = _new_info()
        if leaky not in self._LEAKY:
            raise ValueError("leaky must be one of %s, not %r" %
                             (", ".join(self._LEAKY), leaky))
        if announce not in self._ANNOUNCE:
            raise ValueError("announce must be one of %s, not %r" %
                             (", ".join(self._ANNOUNCE), announce))
        if not 0 <= spin_us <= 1000:
            raise ValueError("spin_us must be 0..1000, not %r" % (spin_us,))
        o = _lib.ConsumerOptions()
        _clib.cudaipc_consumer_options_init(_ctypes.byref(o))
        self._name = _name(name)
        o.name = self._name
        o.device_id = device_id
        o.connect_timeout_ms = _ms(connect_timeout)
        o.reconnect = 1 if reconnect else 0
        o.reconnect_timeout_ms = _ms(reconnect_timeout)
        o.max_held = max_held
        o.peer_access = 1 if peer_access else 0
        o.keep_all = 1 if keep_all else 0
        o.leaky = self._LEAKY[leaky]
        o.announce = self._ANNOUNCE[announce]
        o.spin_us = spin_us
        self.socket_path = socket_path
        self._warned_drops = False
        self.timeout = timeout
        self.max_held = max_held
        self._ptr = _clib.cudaipc_consumer_new(_path(socket_path),
                                               _ctypes.byref(o))
        if not self._ptr:
            raise Error("cannot make a consumer of %s" % socket_path)
        # the library's hints name these keywords, not the C fields
        _clib.cudaipc_consumer_set_binding(self._ptr, b"python")

    def next_frame(self, timeout=None):
        """The next frame, within @timeout seconds of the connection (None:
        as long as it takes); raises EndOfStream at the producer's end.
        Where it connects first, it waits for a producer as long as
        connect_timeout says (reconnect_timeout after a lost one), whatever
        @timeout, and raises NoProducer past that. Any thread: calls from
        several take turns, each frame going to one of them."""
        c = self._enter()
        frame = None
        try:
            with self._turn:
                # the out-pointer and the FrameInfo are the consumer's
                # own, used under _turn
                st = _clib.cudaipc_consumer_next(c, _ms(timeout),
                                                 self._out_ref)
                if st != _lib.STATUS_OK:
                    text = _text(_clib.cudaipc_consumer_error(c))
                else:
                    frame = Frame(self._out.value, self._info)
                said = _clib.cudaipc_consumer_warning(c)
        finally:
            self._leave()
        # what the producer sent that this consumer refused (metadata,
        # events): dropped, the frames go on; each once a connection
        if said:
            for line in _text(said).splitlines():
                _warnings.warn(line, RuntimeWarning, stacklevel=2)
        if st != _lib.STATUS_OK:
            _raise(st, text)
        if frame.dropped_before and not self._warned_drops:
            self._warned_drops = True
            _warnings.warn(
                "dropped %d frame(s) of the live stream on %s: this program "
                "is slower than the producer, and of a live stream the "
                "newest frames are kept (Consumer.dropped counts them; "
                "leaky=\"none\" holds the producer back instead; warned "
                "once)" % (frame.dropped_before, self.socket_path),
                RuntimeWarning, stacklevel=2)
        return frame

    def __iter__(self):
        # no reference to a frame is kept here between two frames
        while True:
            try:
                yield self.next_frame(self.timeout)
            except EndOfStream:
                return

    @property
    def dropped(self):
        """Frames dropped since it started (see @leaky); 0 once closed."""
        return self._quick(_clib.cudaipc_consumer_dropped, 0)

    @property
    def held(self):
        """Frames held now (those closed whose arrays live included); 0
        once closed."""
        return self._quick(_clib.cudaipc_consumer_held, 0)

    def cancel(self):
        """Makes a waiting next_frame() raise Cancelled, and every later
        one (any thread)."""
        self._quick(_clib.cudaipc_consumer_cancel, None)

    _interrupt = staticmethod(lambda ptr: _clib.cudaipc_consumer_cancel(ptr))
    _free = staticmethod(lambda ptr: _clib.cudaipc_consumer_free(ptr))



def _memory_of(obj):
    """(pointer, bytes, on the GPU, keep) of an array, a tensor or a
    buffer: @keep owns that memory (@obj itself, or a contiguous copy of
    host memory that was not contiguous), and the caller holds it until
    the library's copy into a slot returned."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        if not _c_contiguous(cai):
            raise ValueError("the frame's memory must be C-contiguous: "
                             "copy it first (torch's contiguous(), "
                             "cupy.ascontiguousarray())")
        return _extent(cai) + (True, obj)
    if hasattr(obj, "is_cuda") and hasattr(obj, "numpy"):
        # a torch tensor in host memory: a contiguous one (itself, or a
        # copy that nothing else holds) seen as a NumPy array, which holds
        # it as long as the array lives
        return _memory_of(obj.contiguous().numpy())
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        if not isinstance(ai.get("data"), tuple) or not _c_contiguous(ai):
            # a view of a buffer, or strided: a contiguous array of it
            try:
                import numpy
            except ImportError:
                raise ValueError("the frame's memory must be C-contiguous "
                                 "(or NumPy there to copy it)") from None
            obj = numpy.ascontiguousarray(obj)
            ai = obj.__array_interface__
        return _extent(ai) + (False, obj)
    view = memoryview(obj)
    if view.readonly or not view.c_contiguous:
        # bytes the library may read, in C order
        buf = _ctypes.c_char_p(view.tobytes())
        return _ctypes.cast(buf, _ctypes.c_void_p).value, view.nbytes, False, \
            buf
    arr = (_ctypes.c_char * view.nbytes).from_buffer(view)
    return _ctypes.addressof(arr), view.nbytes, False, arr


def _c_contiguous(ai):
    """Whether the array that interface @ai describes is C-contiguous."""
    strides = ai.get("strides")
    if strides is None:
        return True
    want = int(ai["typestr"][2:])
    for n, stride in zip(reversed(ai["shape"]), reversed(strides)):
        if n > 1 and stride != want:
            return False
        want *= n
    return True


def _extent(ai):
    """(pointer, bytes) of the C-contiguous array interface @ai."""
    n = int(ai["typestr"][2:])
    for s in ai["shape"]:
        n *= s
    return ai["data"][0], n


class Producer(_Handle):
    """Publishes frames on @socket_path (as Consumer's), which cuipcsrc
    pipelines read.

    @fmt, @width, @height and @fps make the caps (raw video; memory laid out
    as GStreamer lays out @fmt); @backend is "cuda" (frames in GPU memory
    on @device_id), "host", or "auto" (as cuipcsink's default: cuda where
    that GPU is usable, else host; `backend` says which it is once made).
    @live says whether the stream goes on at its
    own pace (a camera: consumers keep the newest frames, and with
    on_full="wait" a publish() waits up to @full_timeout seconds for a free
    slot, else the frame is dropped) or not (the default, a file or a
    decoder: consumers get every frame, and a publish() waits for the
    slowest as long as it takes, unless its own timeout says otherwise).
    """

    _what = "producer"

    _BACKENDS = {"auto": _lib.BACKEND_AUTO, "cuda": _lib.BACKEND_CUDA,
                 "host": _lib.BACKEND_HOST}

    def __init__(self, socket_path, fmt, width, height, fps=30, *,
                 backend="auto", device_id=0, ring_size=4, on_full="wait",
                 full_timeout=1.0, name=None, socket_mode=0o660, live=False):
        self._init_handle()
        if backend not in self._BACKENDS:
            raise ValueError("backend must be auto, cuda or host, not %r" %
                             (backend,))
        if on_full not in ("wait", "drop"):
            raise ValueError("on_full must be wait or drop, not %r" %
                             (on_full,))
        o = _lib.ProducerOptions()
        _clib.cudaipc_producer_options_init(_ctypes.byref(o))
        self._name = _name(name)
        o.name = self._name
        o.backend = self._BACKENDS[backend]
        o.device_id = device_id
        o.ring_size = ring_size
        o.wait_when_full = 1 if on_full == "wait" else 0
        o.full_timeout_ms = _ms(full_timeout) if full_timeout else 0
        o.socket_mode = socket_mode
        o.live = 1 if live else 0
        self.caps = ("video/x-raw, format=(string)%s, width=(int)%d, "
                     "height=(int)%d, framerate=(fraction)%d/1" %
                     (fmt, width, height, fps))
        p = _clib.cudaipc_producer_new(_path(socket_path),
                                       self.caps.encode(), _ctypes.byref(o))
        if not p:
            raise Error(_text(_clib.cudaipc_producer_last_error()))
        self._ptr = p
        # what auto chose: "cuda" or "host"
        self.backend = "cuda" if _clib.cudaipc_producer_backend(p) == \
            _lib.BACKEND_CUDA else "host"

    def publish(self, frame, pts=None, timeout=None, *, regions=(),
                objects=()):
        """Copies @frame (an array, a tensor or a buffer; host memory that
        is not contiguous as a contiguous copy) into a slot and publishes
        it, with @regions (:class:`Region`) and @objects
        (:class:`Object`) on it as GStreamer metas. Returns False when the
        ring was full and it was dropped. Any thread: calls from several
        take turns."""
        # @keep holds the memory at @ptr until the copy returned
        ptr, size, on_device, keep = _memory_of(frame)
        pts = _NONE if pts is None else pts
        rs = os_ = None
        if regions or objects:
            rs = (_lib.Region * max(len(regions), 1))()
            os_ = (_lib.Object * max(len(objects), 1))()
            for r, c in zip(regions, rs):
                r._to_c(c)
            for o, c in zip(objects, os_):
                o._to_c(c)
        p = self._enter()
        try:
            with self._turn:
                if rs is not None:
                    st = _clib.cudaipc_producer_publish_annotated(
                        p, ptr, size, 1 if on_device else 0, pts,
                        _ms(timeout), rs, len(regions), os_, len(objects))
                else:
                    st = _clib.cudaipc_producer_publish(
                        p, ptr, size, 1 if on_device else 0, pts,
                        _ms(timeout))
                if st not in (_lib.STATUS_OK, _lib.STATUS_TIMEOUT):
                    text = _text(_clib.cudaipc_producer_error(p))
        finally:
            self._leave()
        del keep
        if st == _lib.STATUS_TIMEOUT:
            return False
        if st != _lib.STATUS_OK:
            _raise(st, text)
        return True

    @property
    def consumers(self):
        """Consumers past their handshake."""
        p = self._enter()
        try:
            return _clib.cudaipc_producer_n_consumers(p)
        finally:
            self._leave()

    @property
    def counts(self):
        """(published, dropped) since it started."""
        pub, drop = _ctypes.c_uint64(), _ctypes.c_uint64()
        p = self._enter()
        try:
            _clib.cudaipc_producer_counts(p, _ctypes.byref(pub),
                                          _ctypes.byref(drop))
        finally:
            self._leave()
        return pub.value, drop.value

    def end(self):
        """Ends the stream: consumers get EOS."""
        p = self._enter()
        try:
            with self._turn:
                st = _clib.cudaipc_producer_end(p)
                if st != _lib.STATUS_OK:
                    text = _text(_clib.cudaipc_producer_error(p))
        finally:
            self._leave()
        if st != _lib.STATUS_OK:
            _raise(st, text)

    _interrupt = staticmethod(lambda ptr: _clib.cudaipc_producer_cancel(ptr))
    _free = staticmethod(lambda ptr: _clib.cudaipc_producer_free(ptr))

