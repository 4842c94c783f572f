# SPDX-License-Identifier: LGPL-2.1-or-later
"""The C library (libcudaipc-1.0, cudaipc.h) through ctypes."""

import ctypes
import ctypes.util
import os

STATUS_OK = 0
STATUS_TIMEOUT = 1
STATUS_EOS = 2
STATUS_NO_PRODUCER = 3
STATUS_REFUSED = 4
STATUS_PRODUCER_LOST = 5
STATUS_TOO_MANY_HELD = 6
STATUS_CANCELLED = 7
STATUS_INVALID = 8
STATUS_FAILED = 9

BACKEND_HOST = 0
BACKEND_CUDA = 1
BACKEND_AUTO = 2
ANNOUNCE_BY_SOCKET = 0
ANNOUNCE_BY_SHARED_MEMORY = 1
LEAKY_AUTO = 0
LEAKY_NONE = 1
LEAKY_DOWNSTREAM = 2

MAX_PLANES = 4


class ConsumerOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("device_id", ctypes.c_int32),
        ("connect_timeout_ms", ctypes.c_uint32),
        ("reconnect", ctypes.c_int32),
        ("reconnect_timeout_ms", ctypes.c_uint32),
        ("max_held", ctypes.c_int32),
        ("peer_access", ctypes.c_int32),
        ("keep_all", ctypes.c_int32),
        ("leaky", ctypes.c_int32),
        ("announce", ctypes.c_int32),
        ("spin_us", ctypes.c_uint32),
    ]


class FrameInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_uint32),
        ("device_id", ctypes.c_int32),
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
        ("format", ctypes.c_char * 16),
        ("caps", ctypes.c_char_p),
        ("n_planes", ctypes.c_uint32),
        ("plane_offset", ctypes.c_uint64 * MAX_PLANES),
        ("plane_stride", ctypes.c_uint32 * MAX_PLANES),
        ("size", ctypes.c_uint64),
        ("data", ctypes.c_size_t),
        ("number", ctypes.c_uint64),
        ("offset", ctypes.c_uint64),
        ("pts", ctypes.c_uint64),
        ("duration", ctypes.c_uint64),
        ("capture_time", ctypes.c_uint64),
        ("publish_time", ctypes.c_uint64),
        ("n_regions", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("n_objects", ctypes.c_uint32),
        ("dropped_before", ctypes.c_uint64),
    ]


class Region(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_char * 64),
        ("id", ctypes.c_int32),
        ("parent_id", ctypes.c_int32),
        ("x", ctypes.c_uint32),
        ("y", ctypes.c_uint32),
        ("w", ctypes.c_uint32),
        ("h", ctypes.c_uint32),
        ("confidence", ctypes.c_double),
    ]


class Object(ctypes.Structure):
    _fields_ = [
        ("label", ctypes.c_char * 64),
        ("x", ctypes.c_int32),
        ("y", ctypes.c_int32),
        ("w", ctypes.c_int32),
        ("h", ctypes.c_int32),
        ("rotation", ctypes.c_float),
        ("confidence", ctypes.c_float),
        ("id", ctypes.c_uint32),
        ("reserved", ctypes.c_int32),
        ("track_id", ctypes.c_int64),
    ]


class Plane(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_size_t),
        ("ndim", ctypes.c_uint32),
        ("element_bits", ctypes.c_uint32),
        ("shape", ctypes.c_int64 * 3),
        ("strides", ctypes.c_int64 * 3),
    ]


class ProducerOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("backend", ctypes.c_uint32),
        ("device_id", ctypes.c_int32),
        ("ring_size", ctypes.c_uint32),
        ("wait_when_full", ctypes.c_int32),
        ("full_timeout_ms", ctypes.c_uint32),
        ("socket_mode", ctypes.c_uint32),
        ("live", ctypes.c_int32),
    ]


def _candidates():
    env = os.environ.get("CUDAIPC_LIBRARY")
    if env:
        yield env
    try:
        from . import _config
        yield os.path.join(_config.LIBDIR, "libcudaipc-1.0.so.0")
    except ImportError:
        pass
    found = ctypes.util.find_library("cudaipc-1.0")
    if found:
        yield found
    yield "libcudaipc-1.0.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("cannot load libcudaipc-1.0 (set CUDAIPC_LIBRARY to "
                      "its path): " + "; ".join(errors))


lib = _load()

_c = ctypes
_sigs = {
    "cudaipc_consumer_options_init": (None, [_c.POINTER(ConsumerOptions)]),
    "cudaipc_consumer_new": (_c.c_void_p,
                             [_c.c_char_p, _c.POINTER(ConsumerOptions)]),
    "cudaipc_consumer_next": (_c.c_int, [_c.c_void_p, _c.c_uint32,
                                         _c.POINTER(_c.c_void_p)]),
    "cudaipc_consumer_error": (_c.c_char_p, [_c.c_void_p]),
    "cudaipc_consumer_set_binding": (_c.c_int, [_c.c_void_p, _c.c_char_p]),
    "cudaipc_consumer_warning": (_c.c_char_p, [_c.c_void_p]),
    "cudaipc_consumer_held": (_c.c_uint32, [_c.c_void_p]),
    "cudaipc_consumer_dropped": (_c.c_uint64, [_c.c_void_p]),
    "cudaipc_consumer_cancel": (None, [_c.c_void_p]),
    "cudaipc_consumer_free": (None, [_c.c_void_p]),
    "cudaipc_frame_get_info": (_c.c_int, [_c.c_void_p,
                                          _c.POINTER(FrameInfo)]),
    "cudaipc_frame_get_region": (_c.c_int, [_c.c_void_p, _c.c_uint32,
                                            _c.POINTER(Region)]),
    "cudaipc_frame_get_object": (_c.c_int, [_c.c_void_p, _c.c_uint32,
                                            _c.POINTER(Object)]),
    "cudaipc_frame_release": (None, [_c.c_void_p]),
    "cudaipc_frame_get_plane": (_c.c_int, [_c.c_void_p, _c.c_uint32,
                                           _c.POINTER(Plane)]),
    "cudaipc_frame_to_dlpack": (_c.c_void_p, [_c.c_void_p, _c.c_int32]),
    "cudaipc_dlpack_capsule_destructor": (_c.c_void_p, [_c.c_void_p,
                                                        _c.c_void_p]),
    "cudaipc_producer_options_init": (None, [_c.POINTER(ProducerOptions)]),
    "cudaipc_producer_new": (_c.c_void_p, [_c.c_char_p, _c.c_char_p,
                                           _c.POINTER(ProducerOptions)]),
    "cudaipc_producer_last_error": (_c.c_char_p, []),
    "cudaipc_producer_publish": (_c.c_int, [_c.c_void_p, _c.c_size_t,
                                            _c.c_uint64, _c.c_int,
                                            _c.c_uint64, _c.c_uint32]),
    "cudaipc_producer_publish_annotated": (
        _c.c_int, [_c.c_void_p, _c.c_size_t, _c.c_uint64, _c.c_int,
                   _c.c_uint64, _c.c_uint32, _c.POINTER(Region), _c.c_uint32,
                   _c.POINTER(Object), _c.c_uint32]),
    "cudaipc_producer_n_consumers": (_c.c_uint32, [_c.c_void_p]),
    "cudaipc_producer_backend": (_c.c_uint32, [_c.c_void_p]),
    "cudaipc_producer_counts": (None, [_c.c_void_p,
                                       _c.POINTER(_c.c_uint64),
                                       _c.POINTER(_c.c_uint64)]),
    "cudaipc_producer_end": (_c.c_int, [_c.c_void_p]),
    "cudaipc_producer_error": (_c.c_char_p, [_c.c_void_p]),
    "cudaipc_producer_cancel": (None, [_c.c_void_p]),
    "cudaipc_producer_free": (None, [_c.c_void_p]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
