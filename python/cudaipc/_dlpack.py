# SPDX-License-Identifier: LGPL-2.1-or-later
"""DLPack capsules for frames, in ctypes (no compiled extension).

A capsule holds a DLManagedTensor whose manager context keeps the frame it
views alive: the frame's slot is released only once every consumer of the
capsule (a torch or CuPy array) called its deleter, or the capsule was
dropped unused.
"""

import ctypes
import struct

KDL_CPU = 1
KDL_CUDA = 2
KDL_UINT = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _Deleter),
]

_NAME = b"dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# manager context id -> what it keeps alive (the owner, the structures)
_live = {}
_next_id = [1]


def _release(ctx):
    _live.pop(ctx, None)


@_Deleter
def _deleter(managed):
    _release(managed.contents.manager_ctx)


_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CapsuleDestructor
def _capsule_destructor(capsule):
    # a capsule nobody consumed still has its name: we delete it
    if _api.PyCapsule_IsValid(capsule, _NAME):
        ptr = _api.PyCapsule_GetPointer(capsule, _NAME)
        managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor))
        _release(managed.contents.manager_ctx)


def live_count():
    """Capsules and arrays from them still alive (for tests)."""
    return len(_live)


# DLManagedTensor on a 64-bit machine: the DLTensor (data, device type
# and id, ndim, dtype code, bits and lanes, shape, strides, byte_offset),
# manager_ctx, deleter; then our shape and strides arrays
_HEAD = struct.Struct("=QiiiBBHQQQQQ")
assert _HEAD.size == ctypes.sizeof(DLManagedTensor)
_DELETER = ctypes.cast(_deleter, ctypes.c_void_p).value
_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p)


def capsule(owner, data, shape, strides, device_type, device_id):
    """A "dltensor" capsule of uint8 elements at @data, @shape and
    @strides in elements, which keeps @owner alive until released."""
    ndim = len(shape)
    mem = ctypes.create_string_buffer(_HEAD.size + 16 * ndim)
    base = ctypes.addressof(mem)
    ctx = _next_id[0]
    _next_id[0] += 1
    _HEAD.pack_into(mem, 0, data, device_type, device_id, ndim, KDL_UINT, 8,
                    1, base + _HEAD.size, base + _HEAD.size + 8 * ndim, 0,
                    ctx, _DELETER)
    struct.pack_into("=%dq" % (2 * ndim), mem, _HEAD.size, *shape, *strides)
    _live[ctx] = (owner, mem)
    return _api.PyCapsule_New(base, _NAME, _DESTRUCTOR)
